package bench

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisStats is what a Redis's INFO tells of the work it has done: the
// calls of each command (INFO commandstats), its CPU time (INFO cpu) and
// the memory it holds (INFO memory). Readings are totals since the server
// started; Sub of two readings is what happened between them.
type RedisStats struct {
	// Calls is the number of calls of each command, by the name
	// commandstats gives it ("evalsha", "client|setinfo").
	Calls map[string]int64
	// CPU is used_cpu_sys + used_cpu_user, to the microsecond.
	CPU time.Duration
	// UsedMemory is used_memory, in bytes.
	UsedMemory int64
}

// CommandCalls is one command's share of RedisStats.Calls.
type CommandCalls struct {
	Name  string
	Calls int64
}

// ParseRedisInfo reads the commandstats, cpu and memory sections of an INFO
// answer. It fails when a cmdstat line is malformed or when
// used_cpu_sys, used_cpu_user or used_memory is missing.
func ParseRedisInfo(info string) (RedisStats, error) {
	s := RedisStats{Calls: map[string]int64{}}
	var sys, user float64
	found := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		key, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok || strings.HasPrefix(key, "#") {
			continue
		}
		var err error
		switch {
		case strings.HasPrefix(key, "cmdstat_"):
			s.Calls[strings.TrimPrefix(key, "cmdstat_")], err = cmdstatCalls(val)
		case key == "used_cpu_sys":
			sys, err = strconv.ParseFloat(val, 64)
		case key == "used_cpu_user":
			user, err = strconv.ParseFloat(val, 64)
		case key == "used_memory":
			s.UsedMemory, err = strconv.ParseInt(val, 10, 64)
		default:
			continue
		}
		if err != nil {
			return RedisStats{}, fmt.Errorf("bench: INFO %s: %w", key, err)
		}
		found[key] = true
	}
	for _, key := range []string{"used_cpu_sys", "used_cpu_user", "used_memory"} {
		if !found[key] {
			return RedisStats{}, fmt.Errorf("bench: INFO has no %s", key)
		}
	}
	s.CPU = time.Duration(math.Round((sys+user)*1e6)) * time.Microsecond // INFO gives µs
	return s, nil
}

// cmdstatCalls returns the calls field of a commandstats value
// ("calls=12,usec=30,usec_per_call=2.50,...").
func cmdstatCalls(val string) (int64, error) {
	for field := range strings.SplitSeq(val, ",") {
		if v, ok := strings.CutPrefix(field, "calls="); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no calls in %q", val)
}

// ReadRedisStats reads rdb's INFO commandstats, cpu and memory with one
// INFO call; on a Redis Cluster, on every master, summed.
func ReadRedisStats(ctx context.Context, rdb redis.UniversalClient) (RedisStats, error) {
	c, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return readNode(ctx, rdb)
	}
	total := RedisStats{Calls: map[string]int64{}}
	var mu sync.Mutex
	err := c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		s, err := readNode(ctx, node)
		mu.Lock()
		defer mu.Unlock()
		for name, n := range s.Calls {
			total.Calls[name] += n
		}
		total.CPU += s.CPU
		total.UsedMemory += s.UsedMemory
		return err
	})
	return total, err
}

func readNode(ctx context.Context, rdb redis.Cmdable) (RedisStats, error) {
	info, err := rdb.Info(ctx, "commandstats", "cpu", "memory").Result()
	if err != nil {
		return RedisStats{}, fmt.Errorf("bench: redis INFO: %w", err)
	}
	return ParseRedisInfo(info)
}

// Sub returns what happened from the reading before to s: the calls of
// each command that was called in between, and the CPU and memory deltas.
func (s RedisStats) Sub(before RedisStats) RedisStats {
	d := RedisStats{Calls: map[string]int64{}, CPU: s.CPU - before.CPU, UsedMemory: s.UsedMemory - before.UsedMemory}
	for name, n := range s.Calls {
		if n -= before.Calls[name]; n != 0 {
			d.Calls[name] = n
		}
	}
	return d
}

// TotalCalls is the sum of Calls.
func (s RedisStats) TotalCalls() int64 {
	var n int64
	for _, c := range s.Calls {
		n += c
	}
	return n
}

// Top returns the n most called commands, most called first (ties by name).
func (s RedisStats) Top(n int) []CommandCalls {
	out := make([]CommandCalls, 0, len(s.Calls))
	for name, c := range s.Calls {
		out = append(out, CommandCalls{name, c})
	}
	slices.SortFunc(out, func(a, b CommandCalls) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), strings.Compare(a.Name, b.Name))
	})
	return out[:min(n, len(out))]
}
