package delivery

import (
	"context"
	"errors"
	"hash/crc32"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2arelay/relay/internal/cadence"
	"github.com/a2arelay/relay/internal/outbox"
	"github.com/a2arelay/relay/internal/taskstore"
)

// The outbox owner (Config.Outbox): one relay at a time owns each
// partition's outbox (internal/outbox) and delivers the first attempt of
// every notification in it, lane by lane in order, many lanes at once. A
// failed first attempt is parked in its lane, where the token workers
// retry it; later notifications of a parked lane follow it there.

// The Queue decides the outbox lease and its cadence (outbox.Timing): how
// long a lease lasts unrenewed, how often an owner renews it and stores its
// offset (Renew), and how often relays look for partitions without an owner
// (Look).

// outboxBacklog caps the entries an owner holds in memory per partition
// that are not done: it reads no more until some are. outboxHeld caps all
// it holds, the done ones kept behind an older one in flight (a slow
// webhook's POST) included: those wait only for the offset to move past
// them, so other webhooks go on until then.
const (
	outboxBacklog = 4096
	outboxHeld    = 65536
)

// laneSpill is how many items a lane may queue in memory behind the one in
// flight: past it, they are handed to the lanes (a slow webhook of a busy
// task would otherwise hold more and more of the owner's memory).
const laneSpill = 256

// configFresh is how long a config loaded with an item is used as it is: an
// item attempted later reads it again.
const configFresh = 250 * time.Millisecond

// ownLoop takes partitions' outboxes that no relay owns, up to this
// relay's share (the partitions over the relays alive, rounded up), hands
// back those over its share, and works on each it holds until ctx ends or
// the lease is lost. It looks every Timing().Look.
func (w *Workers) ownLoop(ctx context.Context) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	parts := w.q.Partitions()
	// owned holds the partitions worked on, handed back ones until their
	// work has ended (so that none is taken twice).
	type ownedPart struct {
		stop       context.CancelFunc
		handedBack bool
	}
	owned := map[int]*ownedPart{}
	start := int(crc32.ChecksumIEEE([]byte(w.consumer)) % uint32(parts)) // relays start apart
	pass := func() {
		n, err := w.q.Relays(ctx)
		if err != nil {
			if ctx.Err() == nil {
				w.log.WarnContext(ctx, "counting outbox owners", "err", err)
			}
			return
		}
		share := (parts + max(n, 1) - 1) / max(n, 1)
		mu.Lock()
		held := 0
		for _, o := range owned {
			if !o.handedBack {
				held++
			}
		}
		for _, o := range owned { // over the share: hand some back
			if held <= share {
				break
			}
			if !o.handedBack {
				o.handedBack = true
				o.stop()
				held--
			}
		}
		mu.Unlock()
		for i := range parts {
			if held >= share {
				return
			}
			p := (start + i) % parts
			mu.Lock()
			_, busy := owned[p]
			mu.Unlock()
			if busy {
				continue
			}
			o, ok, err := w.q.Own(ctx, p)
			if err != nil {
				if ctx.Err() == nil {
					w.log.WarnContext(ctx, "taking an outbox", "partition", p, "err", err)
				}
				return
			}
			if !ok {
				continue
			}
			pctx, stop := context.WithCancel(ctx)
			mu.Lock()
			owned[p] = &ownedPart{stop: stop}
			mu.Unlock()
			held++
			wg.Go(func() {
				newOutboxPart(w, p, o).run(pctx) // a lease lost or a failure: taken again at a later pass
				mu.Lock()
				delete(owned, p)
				mu.Unlock()
				stop()
			})
		}
	}
	pass()
	t := time.NewTicker(w.q.Timing().Look)
	defer t.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-t.C:
			pass()
		}
	}
	wg.Wait()
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	w.q.Leave(fctx)
}

// drainOutboxes, on the lanes path, delivers what relays on the outbox path
// left in the outboxes (RELAY_DELIVERY_PATH switched back to lanes): each
// partition with entries after its offset is owned until they are done.
// A partition another relay owns (one on the outbox path, or one that
// died and whose lease has not run out yet) is looked at again every
// Timing().Look, until every partition was found empty. It first forgets the
// lanes the outboxes adopted: lanes made from now on are adopted again
// when the outbox path is taken again.
func (w *Workers) drainOutboxes(ctx context.Context) {
	if err := w.q.ForgetAdoptions(ctx); err != nil {
		if ctx.Err() == nil {
			w.log.WarnContext(ctx, "forgetting the outboxes' adopted lanes", "err", err)
		}
	}
	empty := make([]bool, w.q.Partitions())
	left := len(empty)
	t := time.NewTicker(w.q.Timing().Look)
	defer t.Stop()
	for left > 0 && ctx.Err() == nil {
		var wg sync.WaitGroup
		for p := range empty {
			if empty[p] {
				continue
			}
			o, ok, err := w.q.Own(ctx, p)
			if err != nil || !ok {
				continue // owned by another relay: looked at again
			}
			if !o.Pending() {
				if _, err := w.q.KeepOwning(ctx, p, "", true); err != nil && ctx.Err() == nil {
					w.log.WarnContext(ctx, "giving an outbox up", "partition", p, "err", err)
				}
				empty[p] = true
				left--
				continue
			}
			w.log.InfoContext(ctx, "delivering what the outbox path left in an outbox", "partition", p)
			wg.Go(func() {
				op := newOutboxPart(w, p, o)
				op.drainOnly = true
				op.run(ctx) // found empty at a later look
			})
		}
		wg.Wait()
		if left > 0 {
			select {
			case <-ctx.Done():
			case <-t.C:
			}
		}
	}
}

// outboxPart is one owned partition.
type outboxPart struct {
	w *Workers
	p int
	o outbox.Ownership

	mu sync.Mutex
	// lanes holds, per lane being worked on, the items waiting behind the
	// one in flight.
	lanes map[string][]*outboxItem
	// items are the entries read and not yet below the offset, in order.
	items   []*outboxItem
	offset  string
	room    chan struct{}   // signalled when items shrink
	ctx     context.Context // ends when the partition's work does
	lost    context.CancelFunc
	lanesWG sync.WaitGroup
	// idle hands a lane's first item to a lane goroutine that finished its
	// lane and waits for another (see runLanes), up to maxIdle of them:
	// one that carried a POST has the stack it needs, where a new goroutine
	// would grow its own again on every lane turn. run closes it when it
	// dispatches no more.
	idle    chan *outboxItem
	idleN   atomic.Int32
	maxIdle int32
	// drainOnly ends the work once the outbox is read and done (drainOutboxes).
	drainOnly bool
	// reads counts the reads; stale maps a lane whose config changed under
	// the owner (a 410 disabled it, or it was found deleted) to the last
	// read whose items carry the old config: they read it again.
	reads int
	stale map[string]int
	// dispatched is the last read whose items are queued behind their lanes.
	dispatched int
	// undone counts the items held that are not done.
	undone int
	// parkedAt is when a lane was parked under this owner (see prune).
	parkedAt map[string]time.Time
	// configs keeps each lane's config as a read loaded it, so that the
	// next reads within configFresh/2 need not read it again; gone counts
	// the configs found gone (stale marks): a load during which one was
	// found adds nothing, so that no config read before a 410 is kept.
	configs map[string]cachedConfig
	gone    int
}

// cachedConfig is a lane's config and when it was loaded.
type cachedConfig struct {
	config []byte
	at     time.Time
}

// knownConfigs returns the fresh cached configs of es's lanes (op.mu held).
func (op *outboxPart) knownConfigs(es []outbox.OutboxEntry, now time.Time) map[string]cachedConfig {
	var known map[string]cachedConfig
	for _, e := range es {
		if c, ok := op.configs[e.Lane]; ok && now.Sub(c.at) < configFresh/2 {
			if known == nil {
				known = map[string]cachedConfig{}
			}
			known[e.Lane] = c
		}
	}
	return known
}

// keepConfigs caches the configs a load read at (op.mu held), unless a
// config was found gone since it started (generation gen).
func (op *outboxPart) keepConfigs(es []outbox.OutboxEntry, loaded []outbox.Loaded, known map[string]cachedConfig, gen int, at time.Time) {
	if op.gone != gen {
		return
	}
	if len(op.configs) > 4096 {
		op.forgetConfigs(at)
	}
	for i, e := range es {
		if _, ok := known[e.Lane]; !ok && loaded[i].Head.Config != nil {
			op.configs[e.Lane] = cachedConfig{config: loaded[i].Head.Config, at: at}
		}
	}
}

type outboxItem struct {
	e    outbox.OutboxEntry
	h    outbox.Head
	done bool
	// catchUp marks an entry the previous owner may have worked on.
	catchUp bool
	// read numbers the read that loaded the item (and its config), at
	// loadedAt.
	read     int
	loadedAt time.Time
}

func newOutboxPart(w *Workers, p int, o outbox.Ownership) *outboxPart {
	op := &outboxPart{w: w, p: p, o: o, lanes: map[string][]*outboxItem{}, offset: o.Offset, room: make(chan struct{}, 1),
		stale: map[string]int{}, parkedAt: map[string]time.Time{}, configs: map[string]cachedConfig{},
		idle: make(chan *outboxItem), maxIdle: 1}
	if w != nil && w.q != nil {
		// The partition's share of the workers, and one: the lane goroutines
		// kept idle over all partitions are about as many as the workers.
		op.maxIdle = int32(w.cfg.Workers/max(1, w.q.Partitions()) + 1)
	}
	return op
}

// run reads the outbox and hands its entries to lane goroutines until ctx
// ends or the lease is lost; then it waits for the attempts in flight and
// stores the offset, giving the lease up when ctx ended.
func (op *outboxPart) run(ctx context.Context) {
	pctx, cancel := context.WithCancel(ctx)
	op.ctx, op.lost = pctx, cancel
	defer cancel()
	if !op.drainOnly {
		adopted, err := op.w.q.AdoptLanes(pctx, op.p)
		if err != nil {
			op.w.log.WarnContext(pctx, "adopting the lanes of a partition", "partition", op.p, "err", err)
			return // taken again at a later pass
		}
		for _, l := range adopted {
			op.o.Parked[l] = true
		}
	}
	// The lease is renewed until the attempts in flight have ended, also
	// when the work stops (relay stopping, the partition handed back):
	// another relay takes the partition only after them.
	kctx, stopKeeping := context.WithCancel(context.WithoutCancel(ctx))
	defer stopKeeping()
	var keeper sync.WaitGroup
	keeper.Go(func() { op.keep(kctx) })
	after := op.o.Offset
	for pctx.Err() == nil {
		if !op.waitRoom(pctx) {
			break
		}
		// (An idle partition's read times out on the process's grid, with
		// the other partitions' reads and loops: see internal/cadence.)
		es, err := op.w.q.ReadOutbox(pctx, op.p, after, 256, cadence.Until(op.w.now(), time.Second))
		if err != nil {
			if pctx.Err() == nil {
				op.w.log.WarnContext(pctx, "reading an outbox", "partition", op.p, "err", err)
				sleep(pctx, time.Second)
			}
			continue
		}
		if len(es) == 0 {
			if op.drainOnly && op.caughtUp() {
				break
			}
			continue
		}
		after = es[len(es)-1].ID
		catchUp := op.o.MayBeDone(es[0].ID) // some may be the previous owner's work
		// The read is numbered before its configs are loaded: a 410 reported
		// meanwhile marks it stale (see isStale).
		op.mu.Lock()
		op.reads++
		read, gen := op.reads, op.gone
		sent := op.w.now()
		known := op.knownConfigs(es, sent)
		op.mu.Unlock()
		var loaded []outbox.Loaded
		var now time.Time
		clock := op.w.redisClockRead.Load() == 0 || monotonic()-op.w.redisClockRead.Load() > int64(time.Second)
		opts := outbox.LoadOptions{Status: catchUp, Clock: clock, Known: func(lane string) bool { _, ok := known[lane]; return ok }}
		for {
			loaded, now, err = op.w.q.LoadOutbox(context.WithoutCancel(pctx), op.p, es, opts)
			if err == nil || pctx.Err() != nil {
				break
			}
			op.w.log.WarnContext(pctx, "loading outbox entries", "partition", op.p, "err", err)
			sleep(pctx, time.Second)
		}
		if err != nil {
			break // the entries stay after the offset, for the next owner
		}
		// How long the first entry waited, by Redis's clock (the entry's id
		// is its time), for backpressure.
		if !now.IsZero() {
			// TIME ran between the send and the reply: the midpoint is the
			// best local reading for it.
			local := sent.Add(op.w.now().Sub(sent) / 2)
			op.w.redisClock.Store(now.Sub(local).Nanoseconds())
			op.w.redisClockRead.Store(max(monotonic(), 1))
		}
		if w := op.w.redisNow().Sub(streamTime(es[0].ID)); w > 0 {
			op.w.pressure.Observe(w)
		}
		at := op.w.now()
		ats := make([]time.Time, len(es))
		for i, e := range es {
			ats[i] = at
			if c, ok := known[e.Lane]; ok {
				loaded[i].Head.Config, ats[i] = c.config, c.at
			}
		}
		op.mu.Lock()
		op.keepConfigs(es, loaded, known, gen, at)
		op.mu.Unlock()
		op.dispatch(es, loaded, catchUp, read, ats)
	}
	close(op.idle) // (the idle lane goroutines end, and the others once their lanes are done)
	op.lanesWG.Wait()
	cancel()
	stopKeeping()
	keeper.Wait()
	// The last offset, and the lease given up when relay stops (a lease
	// lost is another's: KeepOwning writes nothing then).
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer fcancel()
	if _, err := op.w.q.KeepOwning(fctx, op.p, op.currentOffset(), ctx.Err() != nil || op.drainOnly); err != nil {
		op.w.log.WarnContext(fctx, "storing an outbox offset", "partition", op.p, "err", err)
	}
}

// redisNow is Redis's clock as last read (the local clock until it is).
func (w *Workers) redisNow() time.Time {
	return w.now().Add(time.Duration(w.redisClock.Load()))
}

// keep renews the lease and stores the offset at the Queue's cadence
// (Timing().Renew); a lease found another's ends the partition's work.
// About once a minute it also prunes the parked lanes.
func (op *outboxPart) keep(ctx context.Context) {
	renew := op.w.q.Timing().Renew
	pruneEvery := max(1, int(time.Minute/renew))
	t := time.NewTimer(cadence.Until(op.w.now(), renew)) // (every partition's keeper wakes together)
	defer t.Stop()
	stored := ""
	ticks := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			t.Reset(cadence.Until(op.w.now(), renew))
		}
		off := op.currentOffset()
		if off == stored {
			off = ""
		}
		ok, err := op.w.q.KeepOwning(ctx, op.p, off, false)
		if err != nil {
			if ctx.Err() == nil {
				op.w.log.WarnContext(ctx, "renewing an outbox lease", "partition", op.p, "err", err)
			}
			continue
		}
		if !ok {
			op.w.log.WarnContext(ctx, "outbox lease lost: another relay owns the partition now", "partition", op.p)
			op.lost()
			return
		}
		if off != "" {
			stored = off
		}
		if ticks++; ticks%pruneEvery == 0 {
			op.prune(ctx)
		}
		op.mu.Lock()
		op.forgetConfigs(op.w.now())
		op.mu.Unlock()
	}
}

// forgetConfigs drops the cached configs too old to be used at at (op.mu
// held): the keeper does so every renewal, so that the configs (and their
// credentials) of lanes gone quiet are not kept.
func (op *outboxPart) forgetConfigs(at time.Time) {
	for l, c := range op.configs {
		if at.Sub(c.at) >= configFresh/2 {
			delete(op.configs, l)
		}
	}
}

// caughtUp tells whether every item read is done.
func (op *outboxPart) caughtUp() bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	return len(op.items) == 0
}

// prune forgets the parked lanes that the lanes' workers have emptied
// since (Redis no longer lists them), so that the owner's memory does not
// grow with every lane that ever failed. A lane parked after the listing
// was read is kept.
func (op *outboxPart) prune(ctx context.Context) {
	at := op.w.now()
	lanes, err := op.w.q.ParkedLanes(ctx, op.p)
	if err != nil {
		return // next time
	}
	listed := make(map[string]bool, len(lanes))
	for _, l := range lanes {
		listed[l] = true
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	for l := range op.o.Parked {
		if !listed[l] && op.parkedAt[l].Before(at) {
			delete(op.o.Parked, l)
			delete(op.parkedAt, l)
		}
	}
}

func (op *outboxPart) currentOffset() string {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.offset
}

// waitRoom waits until fewer than outboxBacklog items not done, and fewer
// than outboxHeld in all, are held.
func (op *outboxPart) waitRoom(ctx context.Context) bool {
	for {
		op.mu.Lock()
		n, undone := len(op.items), op.undone
		op.mu.Unlock()
		if undone < outboxBacklog && n < outboxHeld {
			return true
		}
		select {
		case <-op.room:
		case <-ctx.Done():
			return false
		}
	}
}

// dispatch queues the entries read behind their lanes, and hands each lane
// not yet being worked on to an idle lane goroutine (idle), or starts one.
func (op *outboxPart) dispatch(es []outbox.OutboxEntry, loaded []outbox.Loaded, catchUp bool, read int, at []time.Time) {
	var start []*outboxItem
	op.mu.Lock()
	op.dispatched = read
	for l, mark := range op.stale { // marks of idle lanes whose reads are all queued
		if _, busy := op.lanes[l]; !busy && mark < read {
			delete(op.stale, l)
		}
	}
	for i, e := range es {
		e.Event = nil // the event an entry carried is the head's now, and goes with it when the item is done
		it := &outboxItem{e: e, h: loaded[i].Head, catchUp: catchUp, read: read, loadedAt: at[i]}
		op.items = append(op.items, it)
		if catchUp && loaded[i].Status != "" && !(e.Redelivery && loaded[i].Status == "pending") {
			it.done, it.h = true, outbox.Head{} // the previous owner reported it: it has a record (a redelivery's is no longer pending)
			continue
		}
		op.undone++
		if q, busy := op.lanes[e.Lane]; busy {
			op.lanes[e.Lane] = append(q, it)
			continue
		}
		op.lanes[e.Lane] = nil
		start = append(start, it)
	}
	op.advance()
	op.mu.Unlock()
	for _, it := range start {
		select {
		case op.idle <- it:
		default:
			op.lanesWG.Go(func() { op.runLanes(it) })
		}
	}
}

// runLanes runs its lane (runLane), and then, while fewer than maxIdle
// others wait, waits for the first item of another lane to run, until the
// partition's work ends (idle closed).
func (op *outboxPart) runLanes(it *outboxItem) {
	for {
		op.runLane(it)
		if op.idleN.Add(1) > op.maxIdle {
			op.idleN.Add(-1)
			return
		}
		var ok bool
		it, ok = <-op.idle
		op.idleN.Add(-1)
		if !ok {
			return
		}
	}
}

// runLane works on it and then on each item queued behind it in its lane,
// until the partition's work ends: the items left stay after the offset,
// for the next owner.
func (op *outboxPart) runLane(it *outboxItem) {
	for it != nil {
		op.w.waiting.Add(1)
		select {
		case op.w.slots <- struct{}{}:
			op.w.waiting.Add(-1)
		case <-op.ctx.Done():
			op.w.waiting.Add(-1)
			return
		}
		done := op.ctx.Err() == nil && op.work(it)
		<-op.w.slots
		if !done {
			return
		}
		op.mu.Lock()
		it.done = true
		it.h = outbox.Head{} // held only for the offset now: not its event and config
		op.undone--
		q := op.lanes[it.e.Lane]
		if len(q) > laneSpill && !op.spill(it.e.Lane, q) {
			op.mu.Unlock()
			return
		}
		q = op.lanes[it.e.Lane]
		if len(q) == 0 {
			delete(op.lanes, it.e.Lane)
			if op.stale[it.e.Lane] <= op.dispatched {
				delete(op.stale, it.e.Lane) // nothing read up to its mark is left of it
			}
			it = nil
		} else {
			op.lanes[it.e.Lane] = q[1:]
			it = q[0]
		}
		op.advance()
		op.mu.Unlock()
	}
}

// spill hands lane's queued items q (op.mu held) to the lanes: they go to
// the lane in Redis, which gets a token, and the lane is parked, so that
// what comes later follows them there. The lane stays busy meanwhile
// (items read during the spill queue behind it in memory, and are appended
// after it). It returns false when the partition's work ends.
func (op *outboxPart) spill(lane string, q []*outboxItem) bool {
	op.lanes[lane] = nil
	op.mu.Unlock()
	ops := make([]outbox.OutboxOp, len(q))
	for i, it := range q {
		ops[i] = outbox.OutboxOp{Kind: outbox.OpSpill, Entry: it.e, Now: op.w.now(), Replay: it.catchUp || it.e.Redelivery}
	}
	res, err := op.w.q.FinishOutbox(context.Background(), op.p, ops...)
	op.mu.Lock()
	if err != nil {
		op.mu.Unlock()
		op.fail(context.Background(), q[0], err)
		op.mu.Lock()
		return false
	}
	for i, it := range q {
		if res[i] == outbox.NotOwner {
			op.lost()
			return false
		}
		it.done = true
		it.h = outbox.Head{} // held only for the offset now
		op.undone--
	}
	// Parked once Redis lists it so (a prune meanwhile would forget it).
	op.o.Parked[lane] = true
	op.parkedAt[lane] = op.w.now()
	return true
}

// advance moves the offset past the done items at the head (op.mu held).
func (op *outboxPart) advance() {
	n := 0
	for n < len(op.items) && op.items[n].done {
		op.offset = op.items[n].e.ID
		n++
	}
	clear(op.items[:n])
	op.items = op.items[n:]
	select { // (an item done makes room too: see waitRoom)
	case op.room <- struct{}{}:
	default:
	}
}

// work delivers one notification, or queues it behind its parked lane. It
// returns false when what became of it could not be stored, or the lease is
// lost: the partition's work ends then.
func (op *outboxPart) work(it *outboxItem) bool {
	ctx := context.Background()
	op.mu.Lock()
	parked := op.o.Parked[it.e.Lane]
	op.mu.Unlock()
	if parked {
		kind := outbox.OpAppend
		res, err := op.w.q.FinishOutbox(ctx, op.p, outbox.OutboxOp{Kind: kind, Entry: it.e, Now: op.w.now(), Replay: it.catchUp || it.e.Redelivery})
		switch {
		case err != nil:
			return op.fail(ctx, it, err)
		case res[0] == outbox.NotOwner:
			op.lost()
			return false
		case res[0] == outbox.Applied:
			return true
		}
		op.mu.Lock()
		delete(op.o.Parked, it.e.Lane) // the lane emptied: deliver here again
		delete(op.parkedAt, it.e.Lane)
		op.mu.Unlock()
		if !op.reloadConfig(ctx, it) { // (it may have waited long: the config may have changed, or gone with a 410)
			return false
		}
	} else if (op.isStale(it) || op.w.now().Sub(it.loadedAt) > configFresh) && !op.reloadConfig(ctx, it) {
		return false // (an item that waited, behind a slow lane, sees a config changed or deleted meanwhile)
	}
	t := outbox.Token{Partition: op.p, TaskID: it.e.TaskID, ConfigID: it.e.ConfigID, Attempt: 1}
	now := op.w.now()
	f := outbox.Finish{Now: now, First: now}
	var rec Attempt
	switch {
	case it.h.Event == nil:
		f.Outcome = outbox.Skip
		op.w.log.WarnContext(ctx, "notification dropped: its event is no longer stored (the task expired)",
			"notification_id", it.e.NotificationID, "task_id", it.e.TaskID, "event_id", it.e.EventID)
	case it.h.Config == nil:
		f.Outcome = outbox.Drop
	default:
		slot, wait := op.w.admit(ctx, it.h)
		if wait != nil {
			return op.hold(ctx, it, now.Add(wait.For))
		}
		err := op.w.attempt(ctx, t, it.h, &f, &rec)
		op.w.release(ctx, slot)
		if errors.Is(err, errTransient) {
			// Redis did not answer: retried through the lane like a failed POST.
			f.Outcome, f.Due = outbox.Retry, op.w.now().Add(op.w.cfg.Policy.Initial)
		} else if err != nil {
			op.w.log.ErrorContext(ctx, "cannot deliver stored notification", "notification_id", it.e.NotificationID, "err", err)
			f.Outcome, f.Reason = outbox.Dead, err.Error()
		}
	}
	o := outbox.OutboxOp{Kind: outbox.OpDone, Entry: it.e, Outcome: f.Outcome, Attempt: f.Attempt, Now: f.Now, Due: f.Due, First: f.First,
		Reason: f.Reason, Replay: it.catchUp || it.e.Redelivery}
	if f.Outcome == outbox.Retry {
		o.Kind = outbox.OpPark
	}
	res, err := op.w.q.FinishOutbox(ctx, op.p, o)
	if err != nil {
		return op.fail(ctx, it, err)
	}
	if res[0] == outbox.NotOwner {
		op.lost()
		return false
	}
	op.mu.Lock()
	switch f.Outcome {
	case outbox.Retry:
		op.o.Parked[it.e.Lane] = true
		op.parkedAt[it.e.Lane] = op.w.now()
	case outbox.Gone, outbox.Drop:
		op.stale[it.e.Lane] = op.reads // the items read so far carry a config that is gone
		op.gone++
		delete(op.configs, it.e.Lane)
	}
	op.mu.Unlock()
	op.w.report(ctx, t, it.h, f, rec, now)
	return true
}

// hold hands it, which a webhook's limits hold, to its lane, which waits
// until due and is parked (what comes later of it follows it there): not
// an attempt, nothing is logged or counted (limits.go).
func (op *outboxPart) hold(ctx context.Context, it *outboxItem, due time.Time) bool {
	res, err := op.w.q.FinishOutbox(ctx, op.p, outbox.OutboxOp{Kind: outbox.OpHold, Entry: it.e, Now: op.w.now(), Due: due,
		Replay: it.catchUp || it.e.Redelivery})
	if err != nil {
		return op.fail(ctx, it, err)
	}
	if res[0] == outbox.NotOwner {
		op.lost()
		return false
	}
	op.mu.Lock()
	op.o.Parked[it.e.Lane] = true
	op.parkedAt[it.e.Lane] = op.w.now()
	op.mu.Unlock()
	op.w.mover.scheduled(op.p, due)
	return true
}

// isStale tells whether it carries a config that changed under the owner.
func (op *outboxPart) isStale(it *outboxItem) bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	last, ok := op.stale[it.e.Lane]
	if ok && last < it.read {
		return false
	}
	return ok
}

// reloadConfig reads it's config again (nil when it is gone); false when
// Redis did not answer (the partition's work starts over).
func (op *outboxPart) reloadConfig(ctx context.Context, it *outboxItem) bool {
	c, err := op.w.tasks.PushConfig(ctx, it.e.TaskID, it.e.ConfigID)
	switch {
	case errors.Is(err, taskstore.ErrNotFound):
		it.h.Config = nil
	case err != nil:
		return op.fail(ctx, it, err)
	default:
		it.h.Config = c
	}
	return true
}

// fail ends the partition's work when what became of it could not be
// stored: the entry stays after the offset, and the next owner (this relay
// again, unless another is quicker) takes it up again.
func (op *outboxPart) fail(ctx context.Context, it *outboxItem, err error) bool {
	op.w.log.WarnContext(ctx, "storing an outbox delivery failed: the partition's work starts over", "partition", op.p,
		"notification_id", it.e.NotificationID, "err", err)
	op.lost()
	return false
}
