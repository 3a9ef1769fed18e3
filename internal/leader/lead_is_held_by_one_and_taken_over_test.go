package leader

import (
	"context"
	"testing"
	"time"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

func TestLeadIsHeldByOneAndTakenOverWhenItLapses(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	s := New(rdb, layout.New(prefix+"lead", 1))
	ctx := context.Background()
	if ok, err := s.Lead(ctx, "housekeeping", "a", 300*time.Millisecond); !ok || err != nil {
		t.Fatalf("a takes the lead: %v %v", ok, err)
	}
	if ok, _ := s.Lead(ctx, "housekeeping", "b", 300*time.Millisecond); ok {
		t.Fatal("b leads while a holds the lease")
	}
	if ok, _ := s.Lead(ctx, "housekeeping", "a", 300*time.Millisecond); !ok {
		t.Fatal("a cannot renew its own lease")
	}
	time.Sleep(400 * time.Millisecond) // a died
	if ok, _ := s.Lead(ctx, "housekeeping", "b", 300*time.Millisecond); !ok {
		t.Fatal("b does not take over a lapsed lease")
	}
}
