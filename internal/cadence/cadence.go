// Package cadence puts a process's background loops on one grid of
// instants. Each of relay's loops wakes on its own every second or so (a
// pass of housekeeping, a blocking Redis read that times out); started at
// different moments, dozens of them wake the idle process dozens of times
// a second, and on a small virtual machine every wake-up costs more CPU
// than the work it does. A loop that waits until the grid's next point
// instead wakes together with the others: once per point for all of them.
//
// The grid of a process starts at a random offset, so that relays sharing
// a Redis do not all come at once.
package cadence

import (
	"math/rand/v2"
	"time"
)

// offset is where this process's grid starts within a second (set once).
var offset = time.Duration(rand.Int64N(int64(time.Second)))

// Until returns how long, from now, until the next point of the grid of
// period that lies at least a quarter period ahead: a wait of between a
// quarter and one and a quarter periods. The grids of periods that divide
// one another share their points: a loop of 100ms wakes with those of 1s
// and 2s. A period below a millisecond is returned as it is.
func Until(now time.Time, period time.Duration) time.Duration {
	if period < time.Millisecond {
		return period
	}
	return Next(now.Add(period/4), period).Sub(now)
}

// Next returns the first point of the grid of period at or after t (t
// itself when period is below a millisecond).
func Next(t time.Time, period time.Duration) time.Time {
	if period < time.Millisecond {
		return t
	}
	off := (time.Duration(t.UnixNano()) - offset%period) % period
	if off < 0 {
		off += period // (t before the epoch)
	}
	if off == 0 {
		return t
	}
	return t.Add(period - off)
}
