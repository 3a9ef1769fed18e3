package health

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// id is the endpoint id of test endpoint name.
func id(name string) string { return EndpointID("", "https://x.test/"+name) }

func fail(name string, n int64, at time.Time) Outcomes {
	return Outcomes{ID: id(name), URL: "https://x.test/" + name, Failed: n, FirstFailed: at, LastFailed: at, LastError: "HTTP 500"}
}

func ok(name string, at time.Time) Outcomes {
	return Outcomes{ID: id(name), URL: "https://x.test/" + name, OK: 1, LastOK: at}
}

func events(cs []Change) []string {
	var out []string
	for _, c := range cs {
		if c.ID != EndpointID("", c.URL) {
			panic("a change names another endpoint's id")
		}
		out = append(out, strings.TrimPrefix(c.URL, "https://x.test/")+":"+c.Event)
	}
	return out
}

// An endpoint is disabled once its consecutive failures reach the
// threshold, across batches; a success in between starts the run over.
// Its first failure after a success is a "failing" change, once per
// AlertEvery however often it flaps.
func TestEndpointIsDisabledAfterConsecutiveFailures(t *testing.T) {
	t.Parallel()
	s := newStore(t, Config{DisableAfterFailures: 5, AlertEvery: time.Hour})
	ctx := context.Background()
	record := func(at time.Time, b ...Outcomes) []string {
		t.Helper()
		cs, err := s.Record(ctx, at, b)
		if err != nil {
			t.Fatal(err)
		}
		return events(cs)
	}
	if got := record(t0, fail("a", 3, t0)); !slices.Equal(got, []string{"a:failing"}) {
		t.Fatalf("first failures: %v, want a:failing", got)
	}
	// A success resets the run; the next failure is within AlertEvery of
	// the last alert: no second "failing".
	if got := record(t0.Add(time.Second), ok("a", t0.Add(time.Second))); len(got) != 0 {
		t.Fatalf("success: %v", got)
	}
	if got := record(t0.Add(2*time.Second), fail("a", 4, t0.Add(2*time.Second))); len(got) != 0 {
		t.Fatalf("4 failures after a success: %v, want nothing (under the threshold, alert rate limited)", got)
	}
	if got := record(t0.Add(3*time.Second), fail("a", 1, t0.Add(3*time.Second))); !slices.Equal(got, []string{"a:disabled"}) {
		t.Fatalf("5th consecutive failure: %v, want a:disabled", got)
	}
	if d, _ := s.Disabled(ctx); !slices.Equal(d, []string{id("a")}) {
		t.Fatalf("Disabled = %v", d)
	}
	e, err := s.Get(ctx, id("a"), t0.Add(3*time.Second))
	if err != nil || e.State != "disabled" || e.ConsecutiveFailures != 5 || e.Succeeded != 1 || e.Failed != 8 ||
		e.LastError != "HTTP 500" || e.DisabledCause != "failures" {
		t.Fatalf("Get = %+v, %v", e, err)
	}
	if err := s.Enable(ctx, id("a"), t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Disabled(ctx); len(d) != 0 {
		t.Fatalf("Disabled after Enable = %v", d)
	}
	if e, _ := s.Get(ctx, id("a"), t0.Add(time.Minute)); e.State != "enabled" || e.ConsecutiveFailures != 0 {
		t.Fatalf("after Enable: %+v", e)
	}
	for _, unknown := range []string{"nope", id("unknown"), "{x}:ep:" + id("a")} {
		if err := s.Enable(ctx, unknown, t0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Enable(%q): %v, want ErrNotFound", unknown, err)
		}
		if _, err := s.Get(ctx, unknown, t0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(%q): %v, want ErrNotFound", unknown, err)
		}
	}
	// Hours later a flap alerts again.
	later := t0.Add(2 * time.Hour)
	if got := record(later, ok("a", later), fail("b", 1, later)); !slices.Equal(got, []string{"b:failing"}) {
		t.Fatalf("%v", got)
	}
	if got := record(later.Add(time.Second), fail("a", 1, later.Add(time.Second))); !slices.Equal(got, []string{"a:failing"}) {
		t.Fatalf("a flap an hour after the last alert: %v, want a:failing", got)
	}
	// A day on, the first hour's outcomes have left the window.
	if e, _ := s.Get(ctx, id("a"), t0.Add(25*time.Hour)); e.Succeeded != 1 || e.Failed != 1 || *e.SuccessRate != 0.5 {
		t.Fatalf("a day later: %d succeeded, %d failed, want the last hours' 1 and 1", e.Succeeded, e.Failed)
	}
}

// An endpoint failing without a success for DisableAfter is disabled, by
// the clock the caller gives, however few its failures.
func TestEndpointIsDisabledAfterFailingForAWhile(t *testing.T) {
	t.Parallel()
	s := newStore(t, Config{DisableAfterFailures: 0, DisableAfter: 5 * 24 * time.Hour})
	ctx := context.Background()
	for i, at := range []time.Time{t0, t0.Add(48 * time.Hour), t0.Add(119 * time.Hour)} {
		cs, err := s.Record(ctx, at, []Outcomes{fail("a", 1, at)})
		if err != nil || slices.Contains(events(cs), "a:disabled") {
			t.Fatalf("failure %d at %s: %v, %v", i, at, events(cs), err)
		}
	}
	at := t0.Add(120 * time.Hour)
	cs, err := s.Record(ctx, at, []Outcomes{fail("a", 1, at)})
	if err != nil || !slices.Equal(events(cs), []string{"a:disabled"}) || cs[0].Cause != "time" || !cs[0].Since.Equal(t0) {
		t.Fatalf("after 5 days of failures: %+v, %v", cs, err)
	}
	// A success counted late (another relay's, older than the failures
	// stored) does not end the run.
	s2 := newStore(t, Config{DisableAfter: time.Hour})
	if _, err := s2.Record(ctx, t0, []Outcomes{fail("b", 1, t0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Record(ctx, t0.Add(time.Minute), []Outcomes{ok("b", t0.Add(-time.Second))}); err != nil {
		t.Fatal(err)
	}
	at = t0.Add(time.Hour)
	if cs, err := s2.Record(ctx, at, []Outcomes{fail("b", 1, at)}); err != nil || !slices.Equal(events(cs), []string{"b:disabled"}) {
		t.Fatalf("a late success ended the run: %v, %v", events(cs), err)
	}
}

// One webhook URL is one endpoint whatever its spelling.
func TestEndpointIDNormalizesTheURL(t *testing.T) {
	t.Parallel()
	same := []string{"https://Example.test/hook", "HTTPS://example.test:443/hook", "https://user:pw@example.test/hook#x"}
	for _, u := range same[1:] {
		if EndpointID("", u) != EndpointID("", same[0]) {
			t.Errorf("EndpointID(%q) != EndpointID(%q)", u, same[0])
		}
	}
	if EndpointID("", "https://example.test/hook") == EndpointID("", "https://example.test/other") ||
		EndpointID("", "http://example.test") != EndpointID("", "http://example.test:80/") {
		t.Error("distinct paths share an id, or an empty path differs from /")
	}
}
