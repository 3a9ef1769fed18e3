package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The report breaks Redis's calls into every command called at least
// shownCalls times per notification (most called first, at most
// topCommands of them), and the others' sum.
const (
	topCommands = 16
	shownCalls  = 0.01
)

// usage is what has been used up to a moment: this process's CPU and,
// when the run has a Redis, that Redis's INFO.
type usage struct {
	cpu   time.Duration
	cpuOK bool
	redis *RedisStats
}

// readUsage reads this process's CPU time and, when rdb is not nil, rdb's
// INFO.
func readUsage(ctx context.Context, rdb redis.UniversalClient) (usage, error) {
	var u usage
	u.cpu, u.cpuOK = processCPU()
	if rdb == nil {
		return u, nil
	}
	s, err := ReadRedisStats(ctx, rdb)
	if err != nil {
		return u, err
	}
	u.redis = &s
	return u, nil
}

// setCosts sets r.CPU and r.Redis to what was used from before to after.
// INFO is left out of Redis's calls: the readings send it, relay does not.
func (r *Result) setCosts(before, after usage) {
	if before.cpuOK && after.cpuOK {
		r.CPU = after.cpu - before.cpu
	}
	if before.redis != nil && after.redis != nil {
		d := after.redis.Sub(*before.redis)
		delete(d.Calls, "info")
		r.Redis = &d
	}
}

// costs renders, per delivered notification, what Redis and this process
// used over the run.
func (r Result) costs() string {
	if r.Delivered == 0 {
		return ""
	}
	n := float64(r.Delivered)
	var b strings.Builder
	if s := r.Redis; s != nil {
		var parts []string
		others := s.TotalCalls()
		for _, c := range s.Top(topCommands) {
			if float64(c.Calls)/n < shownCalls {
				break
			}
			parts = append(parts, fmt.Sprintf("%s %.2f", c.Name, float64(c.Calls)/n))
			others -= c.Calls
		}
		if others > 0 {
			parts = append(parts, fmt.Sprintf("others %.2f", float64(others)/n))
		}
		fmt.Fprintf(&b, "\nredis commands per notification: %.2f (%s)", float64(s.TotalCalls())/n, strings.Join(parts, ", "))
		fmt.Fprintf(&b, "\nredis CPU per notification: %.1fµs (used_cpu_sys+used_cpu_user)", micros(s.CPU)/n)
		fmt.Fprintf(&b, "\nredis memory per notification: %.0f bytes (used_memory delta)", float64(s.UsedMemory)/n)
	}
	if r.CPU > 0 {
		fmt.Fprintf(&b, "\nprocess CPU per notification: %.1fµs (user+sys of this process: the load clients and the sink, and relay when in-process)", micros(r.CPU)/n)
	}
	return b.String()
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
