package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Redis Cluster URLs name the cluster by some of its nodes (seeds), comma
// separated; the client finds the others itself:
//
//	redis+cluster://[user[:password]@]host:port[,host:port...][/0][?options]
//	rediss+cluster://...  (TLS)
//
// The options are go-redis's cluster URL options (dial_timeout,
// read_timeout, max_redirects, ...). A cluster has database 0 only.
const (
	clusterScheme    = "redis+cluster"
	clusterTLSScheme = "rediss+cluster"
)

// IsRedisClusterURL reports whether a RELAY_REDIS_URL names a Redis Cluster
// (redis+cluster:// or rediss+cluster://).
func IsRedisClusterURL(v string) bool {
	scheme, _, _ := strings.Cut(v, "://")
	return scheme == clusterScheme || scheme == clusterTLSScheme
}

// RedisClusterOptions parses a redis+cluster:// or rediss+cluster:// URL
// into go-redis cluster options. Its errors never quote the password.
func RedisClusterOptions(v string) (*redis.ClusterOptions, error) {
	scheme, rest, ok := strings.Cut(v, "://")
	if !ok || (scheme != clusterScheme && scheme != clusterTLSScheme) {
		return nil, fmt.Errorf("unsupported scheme %q: want %s:// or %s://", scheme, clusterScheme, clusterTLSScheme)
	}
	rest, rawQuery, _ := strings.Cut(rest, "?")
	authority, path, _ := strings.Cut(rest, "/")
	if path != "" && path != "0" {
		return nil, fmt.Errorf("invalid cluster URL: database %q: a cluster has database 0 only", path)
	}
	u := &url.URL{Scheme: strings.TrimSuffix(scheme, "+cluster")}
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		user, err := userInfo(authority[:at])
		if err != nil {
			return nil, err
		}
		u.User, authority = user, authority[at+1:]
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, errors.New("invalid cluster URL: the query cannot be parsed")
	}
	for i, addr := range strings.Split(authority, ",") {
		host, port, err := net.SplitHostPort(addr)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("invalid cluster URL: node %q: want host:port", addr)
		}
		if i == 0 {
			u.Host = addr
		} else {
			q.Add("addr", addr)
		}
	}
	u.RawQuery = q.Encode()
	opt, err := redis.ParseClusterURL(u.String())
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) { // it would quote the URL, password included
			return nil, errors.New("invalid cluster URL: cannot be parsed")
		}
		return nil, fmt.Errorf("invalid cluster URL: %w", err)
	}
	return opt, nil
}

// userInfo decodes the user[:password] part of a URL.
func userInfo(s string) (*url.Userinfo, error) {
	name, pass, hasPass := strings.Cut(s, ":")
	name, err1 := url.PathUnescape(name)
	pass, err2 := url.PathUnescape(pass)
	if err1 != nil || err2 != nil {
		return nil, errors.New("invalid cluster URL: bad escape in the user or password")
	}
	if hasPass {
		return url.UserPassword(name, pass), nil
	}
	return url.User(name), nil
}
