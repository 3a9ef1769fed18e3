package backpressure

import (
	"strings"
	"testing"
	"time"
)

// A Pressure is built whole or not at all: a negative target or hold is an
// error naming both; a zero target is a Pressure that is off.
func TestANegativeTargetOrHoldIsRefused(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{{Target: -time.Millisecond}, {Target: time.Millisecond, MaxHold: -time.Second}} {
		if _, err := New(Deps{}, cfg); err == nil || !strings.Contains(err.Error(), "Target") {
			t.Errorf("New(%+v): got error %v, want one naming Target and MaxHold", cfg, err)
		}
	}
	p, err := New(Deps{}, Config{})
	if err != nil || p.now == nil {
		t.Fatalf("New with a zero config: %v (a clock: %v), want an idle Pressure", err, p != nil && p.now != nil)
	}
	p.Observe(time.Hour)
	if p.Lag() != 0 {
		t.Errorf("a Pressure with a zero target keeps a lag (%s): want it off", p.Lag())
	}
}
