package delivery

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2arelay/relay/internal/health"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/ssrf"
)

// Health is the endpoints' and push configs' health in Redis as the
// workers use it (health.Store implements it): they add the outcomes they
// saw about once a second, and read which endpoints are disabled as often.
type Health interface {
	Record(ctx context.Context, now time.Time, batch []health.Outcomes) ([]health.Change, error)
	RecordConfigs(ctx context.Context, batch []health.ConfigOutcomes) error
	Disabled(ctx context.Context) ([]string, error)
	IsDisabled(ctx context.Context, id string) (bool, error)
}

// HealthObserver hears of endpoint health (metrics.Metrics implements it;
// the workers ask their Observer for it): each change, and how many
// endpoints are disabled.
type HealthObserver interface {
	EndpointChange(event string)
	EndpointsDisabled(n int)
}

// healthChunk caps the endpoints of one Health.Record call, and the push
// configs of one Health.RecordConfigs call.
const healthChunk = 256

// maxHeldConfigs caps the push configs whose counts are kept for a later
// flush when Redis did not take them.
const maxHeldConfigs = 100_000

// ClassEndpointDisabled is the error class of a notification not sent
// because its endpoint is disabled: it is finished as skipped (not a
// failure), and can be replayed once the endpoint is enabled again.
const ClassEndpointDisabled = "endpoint_disabled"

// healthTally counts attempt outcomes per endpoint and per push config in
// memory until they are added to Redis, about once a second (a success
// costs no round trip of its own), and holds the disabled endpoints as
// last read. A nil healthTally keeps nothing and disables nothing.
type healthTally struct {
	store  Health
	mu     sync.Mutex
	counts map[string]*health.Outcomes
	// configs counts per (task, config); the endpoint's Outcomes.Configs
	// are filled from it when taken.
	configs map[health.ConfigRef]*health.ConfigOutcomes
	// disabled holds the disabled endpoint ids, replaced whole (every
	// attempt reads it, without a lock).
	disabled atomic.Pointer[map[string]bool]
}

func newHealthTally(h Health) *healthTally {
	if h == nil {
		return nil
	}
	return &healthTally{store: h}
}

// isDisabled tells whether endpoint id was disabled when last read.
func (t *healthTally) isDisabled(id string) bool {
	if t == nil {
		return false
	}
	d := t.disabled.Load()
	return d != nil && (*d)[id]
}

// count adds the outcome of an attempt made (rec) to its endpoint and to
// its push config (task and config id): a delivery is a success, a retry or a dead letter a failure. Attempts not
// made (an invalid config, a disabled endpoint), 410s (the receiver
// answered: that config is gone) and failures of relay's own egress proxy
// (not the endpoint's: a proxy down must not disable every endpoint)
// count to nothing.
func (t *healthTally) count(o outbox.Outcome, rec Attempt) {
	if t == nil || rec.endpoint == "" || rec.ErrorClass == classConfig || rec.ErrorClass == ClassEndpointDisabled || rec.ErrorClass == ssrf.ClassProxy {
		return
	}
	if o != outbox.Delivered && o != outbox.Retry && o != outbox.Dead {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts, t.configs = map[string]*health.Outcomes{}, map[health.ConfigRef]*health.ConfigOutcomes{}
	}
	c := t.counts[rec.endpoint]
	if c == nil {
		c = &health.Outcomes{ID: rec.endpoint, URL: redactURL(rec.URL), Owner: rec.owner}
		t.counts[rec.endpoint] = c
	}
	addOutcome(c, o == outbox.Delivered, rec)
	ref := health.ConfigRef{TaskID: rec.TaskID, ConfigID: rec.ConfigID}
	if ref.TaskID == "" || ref.ConfigID == "" {
		return
	}
	cc := t.configs[ref]
	if cc == nil || cc.ID != rec.endpoint { // a config that moved counts to its new endpoint from now on
		cc = &health.ConfigOutcomes{ConfigRef: ref, Outcomes: health.Outcomes{ID: c.ID, URL: c.URL, Owner: c.Owner}}
		t.configs[ref] = cc
	}
	addOutcome(&cc.Outcomes, o == outbox.Delivered, rec)
}

// addOutcome adds an attempt's outcome to c.
func addOutcome(c *health.Outcomes, delivered bool, rec Attempt) {
	if delivered {
		c.OK++
		c.LastOK = later(c.LastOK, rec.Time)
		c.RunFailed, c.RunStart = 0, time.Time{}
		return
	}
	c.Failed++
	c.RunFailed++
	if c.FirstFailed.IsZero() || rec.Time.Before(c.FirstFailed) {
		c.FirstFailed = rec.Time
	}
	if c.RunStart.IsZero() {
		c.RunStart = rec.Time
	}
	c.LastFailed = later(c.LastFailed, rec.Time)
	c.LastError = rec.ErrorClass
	switch {
	case rec.Error != "":
		c.LastError += ": " + rec.Error
	case rec.Status != 0:
		c.LastError = "HTTP " + strconv.Itoa(rec.Status)
	}
}

// stillDisabled tells whether endpoint id, disabled when last read, is
// disabled still, as Redis has it now: an operator who enables an endpoint
// and at once replays its window must not have the replay skipped by a
// relay that reads the disabled set only about once a second. An endpoint
// enabled meanwhile leaves the set held here.
func (t *healthTally) stillDisabled(ctx context.Context, id string) (bool, error) {
	on, err := t.store.IsDisabled(ctx, id)
	if err != nil || on {
		return on, err
	}
	for {
		old := t.disabled.Load()
		if old == nil || !(*old)[id] {
			return false, nil
		}
		d := make(map[string]bool, len(*old))
		for k := range *old {
			if k != id {
				d[k] = true
			}
		}
		if t.disabled.CompareAndSwap(old, &d) {
			return false, nil
		}
	}
}

// disable adds id to the disabled endpoints.
func (t *healthTally) disable(id string) {
	d := map[string]bool{id: true}
	if old := t.disabled.Load(); old != nil {
		for k := range *old {
			d[k] = true
		}
	}
	t.disabled.Store(&d)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// take returns the counts so far, per endpoint (each naming the configs
// that sent to it) and per config, and starts again from zero.
func (t *healthTally) take() ([]health.Outcomes, []health.ConfigOutcomes) {
	t.mu.Lock()
	defer t.mu.Unlock()
	configs := make([]health.ConfigOutcomes, 0, len(t.configs))
	for _, c := range t.configs {
		configs = append(configs, *c)
		if e := t.counts[c.ID]; e != nil && len(e.Configs) < health.MaxConfigs {
			e.Configs = append(e.Configs, c.ConfigRef)
		}
	}
	out := make([]health.Outcomes, 0, len(t.counts))
	for _, c := range t.counts {
		out = append(out, *c)
	}
	t.counts, t.configs = nil, nil
	return out, configs
}

// giveBack keeps counts Redis did not take for the next flush (merged with
// those counted since, which come later).
func (t *healthTally) giveBack(batch []health.Outcomes, configs []health.ConfigOutcomes) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts, t.configs = map[string]*health.Outcomes{}, map[health.ConfigRef]*health.ConfigOutcomes{}
	}
	for _, old := range batch {
		if c := t.counts[old.ID]; c != nil {
			mergeOutcomes(c, old)
			continue
		}
		t.counts[old.ID] = &old
	}
	for _, old := range configs {
		if len(t.configs) >= maxHeldConfigs {
			break // Redis has been away long: older config counts go (endpoints' are kept)
		}
		if c := t.configs[old.ConfigRef]; c != nil {
			if c.ID == old.ID {
				mergeOutcomes(&c.Outcomes, old.Outcomes)
			}
			continue
		}
		t.configs[old.ConfigRef] = &old
	}
}

// mergeOutcomes adds old, counted before c, to c.
func mergeOutcomes(c *health.Outcomes, old health.Outcomes) {
	if c.OK == 0 {
		c.RunFailed, c.RunStart = old.RunFailed+c.RunFailed, old.RunStart
		if c.RunStart.IsZero() {
			c.RunStart = c.FirstFailed
		}
	}
	c.OK += old.OK
	c.LastOK = later(c.LastOK, old.LastOK)
	c.Failed += old.Failed
	if !old.FirstFailed.IsZero() && (c.FirstFailed.IsZero() || old.FirstFailed.Before(c.FirstFailed)) {
		c.FirstFailed = old.FirstFailed
	}
	c.LastFailed = later(c.LastFailed, old.LastFailed)
	if c.LastError == "" {
		c.LastError = old.LastError
	}
	c.Configs = append(c.Configs, old.Configs[:min(len(old.Configs), max(0, health.MaxConfigs-len(c.Configs)))]...)
}

// flushHealth adds the counted outcomes to the endpoints' health, tells
// the operator and the metrics of what changed, and reads the disabled
// endpoints again.
func (w *Workers) flushHealth(ctx context.Context) {
	t := w.health
	// In chunks of healthChunk endpoints: a relay that saw thousands of
	// endpoints in a second adds them in several script calls, none of
	// which holds Redis long.
	batch, configs := t.take()
	for len(batch) > 0 {
		n := min(len(batch), healthChunk)
		changes, err := t.store.Record(ctx, w.now(), batch[:n])
		if err != nil {
			if ctx.Err() == nil {
				w.log.WarnContext(ctx, "recording endpoint health", "err", err)
			}
			t.giveBack(batch, nil)
			break
		}
		for _, c := range changes {
			w.endpointChanged(ctx, c)
		}
		batch = batch[n:]
	}
	// The configs' health: healthChunk configs a pipeline, one script
	// call per task partition in it.
	for len(configs) > 0 {
		n := min(len(configs), healthChunk)
		if err := t.store.RecordConfigs(ctx, configs[:n]); err != nil {
			if ctx.Err() == nil {
				w.log.WarnContext(ctx, "recording push config health", "err", err)
			}
			t.giveBack(nil, configs)
			break
		}
		configs = configs[n:]
	}
	ids, err := t.store.Disabled(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.log.WarnContext(ctx, "reading disabled endpoints", "err", err)
		}
		return
	}
	disabled := make(map[string]bool, len(ids))
	for _, id := range ids {
		disabled[id] = true
	}
	t.disabled.Store(&disabled)
	if o, ok := w.observer.(HealthObserver); ok {
		o.EndpointsDisabled(len(ids))
	}
}

// endpointChanged logs a change of an endpoint's health and tells the
// operator and the metrics.
func (w *Workers) endpointChanged(ctx context.Context, c health.Change) {
	reason := strconv.FormatInt(c.Failures, 10) + " consecutive failed attempts"
	if !c.Since.IsZero() {
		reason += ", failing since " + c.Since.UTC().Format(time.RFC3339)
	}
	if c.Event == "disabled" {
		w.health.disable(c.ID) // at once here; other relays read it within a second
		reason = "disabled after " + reason + map[string]string{"failures": " (the consecutive-failure threshold)",
			"time": " (failing for longer than the time threshold)"}[c.Cause] +
			"; its notifications are skipped until it is enabled again"
	}
	w.log.WarnContext(ctx, "webhook endpoint "+c.Event, "endpoint_id", c.ID, "url", c.URL, "failures", c.Failures, "cause", c.Cause)
	if o, ok := w.observer.(HealthObserver); ok {
		o.EndpointChange(c.Event)
	}
	if w.operator != nil {
		a := Alert{Event: "endpoint." + c.Event, Time: w.now().UTC(), URL: c.URL, EndpointID: c.ID, Reason: reason,
			Failures: c.Failures}
		if !c.Since.IsZero() {
			since := c.Since.UTC()
			a.FailingSince = &since
		}
		w.operator.Notify(a)
	}
}

// skipDisabled finishes a notification of a disabled endpoint as skipped,
// without a POST: logged with class endpoint_disabled, counted as no
// failure, to be replayed once the endpoint is enabled again.
func (w *Workers) skipDisabled(f *outbox.Finish, rec *Attempt, a Attempt) error {
	a.URL = redactURL(a.URL)
	a.ErrorClass, a.Error = ClassEndpointDisabled, "not sent: the endpoint is disabled after repeated failures (enable it, then replay)"
	f.Outcome = outbox.Skip
	a.Outcome = string(f.Outcome)
	var err error
	f.Attempt, err = a.appendJSON(make([]byte, 0, 512))
	*rec = a
	return err
}
