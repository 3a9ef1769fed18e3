package cadence

import (
	"testing"
	"time"
)

// Loops that start at different moments wait until the same points: the
// waits of every start within a period end together, a quarter period
// ahead at least, and the points of a period are among those of its
// multiples' (a 100ms loop wakes with the 1s and 2s loops).
func TestLoopsOfOneProcessWakeOnSharedPoints(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, period := range []time.Duration{100 * time.Millisecond, time.Second, 2 * time.Second} {
		var ends []time.Time
		for start := time.Duration(0); start < 3*period; start += period / 7 {
			now := base.Add(start)
			d := Until(now, period)
			if d < period/4 || d > period+period/4 {
				t.Fatalf("period %v, at %v: wait %v, want within [%v, %v]", period, start, d, period/4, period+period/4)
			}
			end := now.Add(d)
			if (time.Duration(end.UnixNano())-offset)%period != 0 {
				t.Fatalf("period %v, at %v: the wait ends at %v, off the grid", period, start, end)
			}
			ends = append(ends, end)
		}
		// Starts within one period share their end, but for those within a
		// quarter period of it (they take the next point).
		distinct := map[time.Time]bool{}
		for _, e := range ends {
			distinct[e] = true
		}
		if len(distinct) > 4 {
			t.Fatalf("period %v: %d starts over three periods end at %d points, want at most 4", period, len(ends), len(distinct))
		}
		// Each point of a 1s grid is a point of the 100ms one.
		if period == time.Second {
			for e := range distinct {
				if (time.Duration(e.UnixNano())-offset%(100*time.Millisecond))%(100*time.Millisecond) != 0 {
					t.Fatalf("the 1s point %v is not on the 100ms grid", e)
				}
			}
		}
	}
}
