// Package layout owns relay's Redis layout: the name of every key relay
// writes (this file, and nowhere else), the stored formats that more than
// one package reads (the delivery record codec, record.go; the entries of
// a task's event stream, event.go; and the Lua library a script starts
// with, lua/lib.lua, of which it is given the functions it uses), and how
// a script takes its arguments: by name,
// declared once on the Go side (Named, named.go). It runs no command: the
// task store (taskstore) and the outbox (outbox) talk to Redis, and take
// their keys from here.
//
// Keys are partitioned by task: partition p = fnv32a(taskID) mod P, and every
// key of a task carries the hash tag {p}, so one Lua script can touch all of
// them atomically on a single Redis and on Redis Cluster alike.
//
// A script is given every key it touches in KEYS, but for the keys whose
// names depend on what it reads (the lane of a push config it finds, the
// record of a notification id it reads or computes): for those it is given
// the fixed part of their names, built here (LanePrefix, Lanes,
// RecordPrefix, LegacyAttemptsPrefix, and EndpointHealth of ""), and
// appends the id. Each such prefix ends after the hash tag its keys share
// with the script's KEYS (the partition's, or {endpoints}), so the keys a
// script names this way live in the same slot by construction.
package layout

import (
	"cmp"
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
)

// Keys names every key relay writes under one prefix.
type Keys struct {
	prefix     string
	partitions int
	// parts holds, per partition, the names that depend on the partition
	// alone, built once per prefix and count by New (and shared by the Keys
	// it returns for them): a commit or a delivery names several of them,
	// and would otherwise build each again.
	parts *[]partNames
}

// partNames are the names of one partition that New builds ahead.
type partNames struct {
	tag, index, lanes, records, deliveries, pending, compact, offers, deadlines, outbox string
}

// New returns the key names under prefix (default "relay") for a Redis
// split into partitions task partitions (default 16).
func New(prefix string, partitions int) Keys {
	k := Keys{prefix: cmp.Or(prefix, "relay"), partitions: cmp.Or(partitions, 16)}
	k.parts = builtNames(k)
	return k
}

// built keeps the names New built, by prefix and partition count, so that
// Keys of the same prefix and count share them (and compare equal).
var built struct {
	sync.Mutex
	m map[Keys]*[]partNames
}

// builtNames returns the names of k's partitions (k.parts not set), built
// on first use.
func builtNames(k Keys) *[]partNames {
	built.Lock()
	defer built.Unlock()
	if n, ok := built.m[k]; ok {
		return n
	}
	parts := make([]partNames, max(k.partitions, 0))
	for p := range parts {
		t := k.buildTag(p)
		parts[p] = partNames{tag: t, index: t + "tasks", lanes: t + "lane:", records: t + "dl:",
			deliveries: t + "deliveries", pending: t + "dl:status:pending", compact: t + "compact",
			offers: t + "offers", deadlines: t + "deadlines", outbox: t + "outbox"}
	}
	if built.m == nil {
		built.m = map[Keys]*[]partNames{}
	}
	built.m[k] = &parts
	return &parts
}

// part returns the names of partition p built ahead, if New built them.
func (k Keys) part(p int) (*partNames, bool) {
	if k.parts == nil || p < 0 || p >= len(*k.parts) {
		return nil, false
	}
	return &(*k.parts)[p], true
}

// Partitions is the number of task partitions.
func (k Keys) Partitions() int { return k.partitions }

// Prefix is the prefix of every key.
func (k Keys) Prefix() string { return k.prefix }

// Partition returns the partition of a task id.
func (k Keys) Partition(taskID string) int {
	// FNV-1a, 32 bits (as hash/fnv's New32a computes it, without its
	// allocations).
	h := uint32(2166136261)
	for i := 0; i < len(taskID); i++ {
		h ^= uint32(taskID[i])
		h *= 16777619
	}
	return int(h % uint32(k.partitions))
}

// Tag is what the names of partition p's keys start with: the prefix and
// the partition's hash tag.
func (k Keys) Tag(p int) string {
	if n, ok := k.part(p); ok {
		return n.tag
	}
	return k.buildTag(p)
}

func (k Keys) buildTag(p int) string { return k.prefix + ":{" + strconv.Itoa(p) + "}:" }

// Task returns the keys of one task (TaskKeys), all in its partition.
func (k Keys) Task(taskID string) TaskKeys {
	p := k.Partition(taskID)
	t := k.Tag(p)
	// The task's own names are cut from one string, built at once.
	var b strings.Builder
	b.Grow(5*(len(t)+len(taskID)) + len("task:events:push:base:idem:"))
	var ends [5]int
	for i, kind := range [5]string{"task:", "events:", "push:", "base:", "idem:"} {
		b.WriteString(t)
		b.WriteString(kind)
		b.WriteString(taskID)
		ends[i] = b.Len()
	}
	all := b.String()
	return TaskKeys{
		Hash:        all[:ends[0]],
		Events:      all[ends[0]:ends[1]],
		Push:        all[ends[1]:ends[2]],
		Base:        all[ends[2]:ends[3]],
		Idempotency: all[ends[3]:ends[4]],
		Index:       k.Index(p, ""),
	}
}

// Index returns the task index of partition p for owner: with client
// authentication every principal has indexes of its own, so listing never
// meets another tenant's tasks; "" is the shared index of RELAY_AUTH=none.
func (k Keys) Index(p int, owner string) string {
	if owner == "" {
		if n, ok := k.part(p); ok {
			return n.index
		}
		return k.Tag(p) + "tasks"
	}
	return k.Tag(p) + "tasks:" + owner
}

// Usage counts the bytes owner's commits stored in partition p during
// usage bucket bucket (a number of bucket lengths since the Unix epoch,
// taskstore's choice): one counter per partition, in the task's own slot
// (relays before taskstore's usage tally counted in the commit script; the
// tally's flushes spread over the slots). The bucket comes before the owner,
// whose name may hold ":"; "" is the shared tenant of RELAY_AUTH=none.
func (k Keys) Usage(p int, owner string, bucket int64) string {
	t := k.Tag(p)
	b := make([]byte, 0, len(t)+len("usage:")+20+1+len(owner))
	b = append(append(b, t...), "usage:"...)
	b = append(strconv.AppendInt(b, bucket, 10), ':')
	return string(append(b, owner...))
}

// Deliveries is the delivery stream (of lane tokens) of partition p.
func (k Keys) Deliveries(p int) string {
	if n, ok := k.part(p); ok {
		return n.deliveries
	}
	return k.Tag(p) + "deliveries"
}

// Lane is the queue of one (task, config) pair. The task id's length keeps
// ids that contain ":" from colliding.
func (k Keys) Lane(taskID, configID string) string { return k.LanePrefix(taskID) + configID }

// LanePrefix is what the names of a task's lanes start with: Lane(task, c)
// is LanePrefix(task) + c. A script that finds a task's configs by reading
// them (HKEYS) cannot be given their lanes in KEYS: it is given this, and
// appends each config id.
func (k Keys) LanePrefix(taskID string) string {
	return k.Lanes(k.Partition(taskID)) + strconv.Itoa(len(taskID)) + ":" + taskID + ":"
}

// Lanes is what the names of partition p's lanes start with. A script that
// finds lanes by reading tokens (task and config ids) is given this, and
// names each lane with lib.lua's laneOf, the one Lua spelling of the rest
// of Lane's name (its test checks that both agree).
func (k Keys) Lanes(p int) string {
	if n, ok := k.part(p); ok {
		return n.lanes
	}
	return k.Tag(p) + "lane:"
}

// Lease is the lease of one lane: held by the token being worked on.
func (k Keys) Lease(taskID, configID string) string {
	return k.Tag(k.Partition(taskID)) + "lease:" + strconv.Itoa(len(taskID)) + ":" + taskID + ":" + configID
}

// Offers is partition p's zset of the offers to work queues that commits
// recorded (taskstore's Offer: member the offer, score its commit's ms):
// the commit that makes a task's turn claimable writes it in the task's
// own slot, atomically, and the offer is removed once it is in the work
// queue's stream (whose keys carry another hash tag, {wq:<queue>}, so one
// script cannot write both).
func (k Keys) Offers(p int) string {
	if n, ok := k.part(p); ok {
		return n.offers
	}
	return k.Tag(p) + "offers"
}

// Compact is partition p's zset of tasks whose event streams are due for
// compaction.
func (k Keys) Compact(p int) string {
	if n, ok := k.part(p); ok {
		return n.compact
	}
	return k.Tag(p) + "compact"
}

// Record is the delivery record of notification id in partition p (one
// string, codec d1: record.go).
func (k Keys) Record(p int, id string) string { return k.RecordPrefix(p) + id }

// RecordPrefix is what the names of partition p's delivery records start
// with: Record(p, id) is RecordPrefix(p) + id. A script that reaches
// records by the notification ids it reads or computes (a lane it drops, a
// commit's new notifications) is given this, and appends each id.
func (k Keys) RecordPrefix(p int) string {
	if n, ok := k.part(p); ok {
		return n.records
	}
	return k.Tag(p) + "dl:"
}

// LegacyAttempts is the attempt list a previous relay kept beside record.
func (k Keys) LegacyAttempts(p int, id string) string { return k.LegacyAttemptsPrefix(p) + id }

// LegacyAttemptsPrefix is to LegacyAttempts what RecordPrefix is to Record.
func (k Keys) LegacyAttemptsPrefix(p int) string { return k.Tag(p) + "dla:" }

// TaskDeliveries is the zset of a task's notification ids by ms that its
// event stream does not name (EventEntry.Configs names the rest, whence
// the task's deliveries are listed): those of entries compaction cut,
// those replayed for a config an entry does not name (and, under their
// entry's ms, those replayed while the stream expires within a retention:
// their records may outlive it), every one of a task
// whose stream may expire before its records (taskstore.Config.TaskRetention,
// or a Commit.ExpireAfter, shorter than the delivery retention), and a
// previous relay's.
func (k Keys) TaskDeliveries(taskID string) string {
	return k.Tag(k.Partition(taskID)) + "dl:task:" + taskID
}

// StatusIndex is partition p's zset of the notification ids in status st
// (every status but delivered), by update ms.
func (k Keys) StatusIndex(p int, st string) string {
	if n, ok := k.part(p); ok && st == "pending" {
		return n.pending
	}
	return k.Tag(p) + "dl:status:" + st
}

// IndexedStatuses are the record statuses that have a status index (every
// status but delivered), in the order StatusIndexes names their indexes.
func IndexedStatuses() []string { return []string{"pending", "failed", "dead", "disabled", "dropped"} }

// StatusIndexes are partition p's status indexes, one per status of
// IndexedStatuses, in its order: a script that moves a record from the
// status it reads to another takes them all in KEYS (a small fixed set),
// and picks one by status with lib.lua's statusIndexes, which names them
// in this order.
func (k Keys) StatusIndexes(p int) []string {
	sts := IndexedStatuses()
	out := make([]string, len(sts))
	for i, st := range sts {
		out[i] = k.StatusIndex(p, st)
	}
	return out
}

// Deadlines is partition p's zset of the task turns that run under a
// deadline (RELAY_TASK_MAX_WAIT, RELAY_TASK_MAX_RUN): member the task id,
// score the ms the turn's current limit is reached. The commit that starts
// a turn adds it, the claim moves it, the commit that ends the turn
// removes it (taskstore, deadline.go).
func (k Keys) Deadlines(p int) string {
	if n, ok := k.part(p); ok {
		return n.deadlines
	}
	return k.Tag(p) + "deadlines"
}

// Retries is partition p's zset of tokens waiting for their next attempt.
func (k Keys) Retries(p int) string { return k.Tag(p) + "retries" }

// Dead is partition p's stream of dead letters.
func (k Keys) Dead(p int) string { return k.Tag(p) + "dead" }

// Meta is the hash of facts fixed at first start (partition count).
func (k Keys) Meta() string { return k.prefix + ":meta" }

// TaskKeys are the keys of one task.
type TaskKeys struct {
	// Hash holds the task's snapshot and fields; Events is its event
	// stream; Push its push configs; Base the checkpoint of its event
	// stream (the task just before the stream's first entry).
	Hash, Events, Push, Base string
	// Idempotency is the task's record of the idempotency keys its worker
	// posts carried (docs/worker-api.md): a hash that the commit script
	// reads and writes with the commit (taskstore's Once).
	Idempotency string
	// Index is the task's partition's index (not the task's own key).
	Index string
}

// Own lists the keys that belong to the task alone (all but Index).
func (t TaskKeys) Own() []string { return []string{t.Hash, t.Events, t.Push, t.Base, t.Idempotency} }

// Outbox is partition p's outbox stream: one entry per notification, in
// commit order, read by the partition's owner (internal/outbox).
func (k Keys) Outbox(p int) string {
	if n, ok := k.part(p); ok {
		return n.outbox
	}
	return k.Tag(p) + "outbox"
}

// OutboxOwner is the lease of partition p's outbox owner.
func (k Keys) OutboxOwner(p int) string { return k.Tag(p) + "outbox:owner" }

// OutboxOffset is the id of the last outbox entry of partition p up to
// which every notification is done (delivered, finished or parked).
func (k Keys) OutboxOffset(p int) string { return k.Tag(p) + "outbox:offset" }

// Parked is partition p's set of lanes that hold notifications parked for
// a retry: later notifications of such a lane queue behind them.
func (k Keys) Parked(p int) string { return k.Tag(p) + "parked" }

// OutboxRelays is the zset of the relays that own outboxes, scored by the
// time of their last pass (ms): their count sets each one's share.
func (k Keys) OutboxRelays() string { return k.prefix + ":outbox:relays" }

// OutboxAdopted marks partition p's lanes as adopted by the outbox (see
// AdoptLanes).
func (k Keys) OutboxAdopted(p int) string { return k.Tag(p) + "outbox:adopted" }

// OutboxAdopting marks partition p while AdoptLanes reads its tokens: its
// delivery stream is not trimmed meanwhile.
func (k Keys) OutboxAdopting(p int) string { return k.Tag(p) + "outbox:adopting" }

// The keys outside the task partitions.

// URLConfigs is the index of the push configs that send to one webhook URL
// (urlHash: taskstore's hash of the normalized URL): a zset, member
// URLConfigMember(task, config), score the ms the config was first given
// that URL. Its configs belong to tasks of any partition, so it has a hash
// tag of its own, {url:<hash>}: no task script can write it atomically
// with a config (taskstore's urlindex.go says how it stays right).
func (k Keys) URLConfigs(urlHash string) string { return k.prefix + ":{url:" + urlHash + "}:configs" }

// URLConfigMember is the member of URLConfigs that names config configID
// of task taskID; the task id's length keeps ids that contain ":" apart.
func URLConfigMember(taskID, configID string) string {
	return strconv.Itoa(len(taskID)) + ":" + taskID + ":" + configID
}

// URLConfigsAnchor is a member of URLConfigs that names no config, scored
// +inf (no reader's range reaches it, no prune drops it): every write of
// the key adds it, so that the key, which its writer expects to expire, is
// never emptied and created again without an expiry, and a write that
// makes the key again finds it missing (see taskstore's urlindex.go).
// ParseURLConfigMember does not read it.
const URLConfigsAnchor = "anchor"

// ParseURLConfigMember reads a member URLConfigMember wrote.
func ParseURLConfigMember(m string) (taskID, configID string, ok bool) {
	n, rest, found := strings.Cut(m, ":")
	l, err := strconv.Atoi(n)
	if !found || err != nil || l < 0 || len(rest) < l+1 || rest[l] != ':' {
		return "", "", false
	}
	return rest[:l], rest[l+1:], true
}

// Leader is the lease of the instance that leads role (housekeeping,
// compaction).
func (k Keys) Leader(role string) string { return k.prefix + ":leader:{" + role + "}" }

// HostValidated marks a webhook host that passed URL validation.
func (k Keys) HostValidated(host string) string {
	return k.prefix + ":webhook-validated:{" + host + "}"
}

// Endpoint names the keys of the delivery limits of one webhook URL and
// its host (internal/throttle). They share a hash tag made from the host,
// so that one script checks both atomically; the URL is hashed into its
// keys' names, which stay short whatever its length.
func (k Keys) Endpoint(host, url string) EndpointKeys {
	hh := sha1.Sum([]byte(host))
	uh := sha1.Sum([]byte(url))
	t := k.prefix + ":{wh:" + hex.EncodeToString(hh[:8]) + "}:"
	u := hex.EncodeToString(uh[:12])
	return EndpointKeys{URLRate: t + "rate:" + u, URLFlight: t + "flight:" + u, HostRate: t + "rate", HostFlight: t + "flight"}
}

// EndpointKeys are the limits' keys of one webhook URL (URLRate, URLFlight)
// and of its host (HostRate, HostFlight): a rate's state (a hash) and the
// deliveries in flight (a zset of leases by expiry).
type EndpointKeys struct {
	URLRate, URLFlight, HostRate, HostFlight string
}

// URLRateAt is the URL's rate state for deliveries at rate (per second):
// configs of one URL that ask for different rates are each spaced by their
// own, apart, and those that ask for the same one share it.
func (e EndpointKeys) URLRateAt(rate float64) string {
	return e.URLRate + ":" + strconv.FormatFloat(rate, 'g', -1, 64)
}

// Stats is partition p's hash of delivery counts in the minute that starts
// at minuteMs.
func (k Keys) Stats(p int, minuteMs int64) string {
	return k.Tag(p) + "stats:" + strconv.FormatInt(minuteMs, 10)
}

// RateWindow counts the requests of client key in the second that starts
// at unix second sec.
func (k Keys) RateWindow(key string, sec int64) string {
	return k.prefix + ":rl:{" + key + "}:" + strconv.FormatInt(sec, 10)
}

// AuthFailureWindow counts the failed authentications of remote address
// addr in the second that starts at unix second sec.
func (k Keys) AuthFailureWindow(addr string, sec int64) string {
	return k.prefix + ":authfail:{" + addr + "}:" + strconv.FormatInt(sec, 10)
}

// WorkQueue names the keys of one work queue of the worker API; they share
// the hash tag {wq:<queue>}.
func (k Keys) WorkQueue(queue string) WorkQueueKeys {
	// The three names are cut from one string, built at once.
	t := len(k.prefix) + len(":{wq:") + len(queue) + len("}:")
	var b strings.Builder
	b.Grow(3*t + len("workgrantslease:"))
	var ends [3]int
	for i, kind := range [3]string{"work", "grants", "lease:"} {
		b.WriteString(k.prefix)
		b.WriteString(":{wq:")
		b.WriteString(queue)
		b.WriteString("}:")
		b.WriteString(kind)
		ends[i] = b.Len()
	}
	all := b.String()
	return WorkQueueKeys{Stream: all[:ends[0]], LegacyGrants: all[ends[0]:ends[1]], leasePrefix: all[ends[1]:ends[2]]}
}

// WorkQueueKeys are the keys of one work queue: its stream of work entries
// and a lease per task. LegacyGrants is the hash of grants per entry that
// builds up to a3a5dfe kept; this one counts grants in the stream's
// pending list and deletes that hash (workqueue.Claims).
type WorkQueueKeys struct {
	Stream, LegacyGrants string
	leasePrefix          string
}

// Lease is the lease of one task of the queue.
func (w WorkQueueKeys) Lease(taskID string) string { return w.leasePrefix + taskID }

// UpstreamLink is the link of relay task taskID to the task of the
// upstream agent that works on it (internal/ingest/upstream). It is outside
// the task partitions: no script touches it, it is read and written alone.
func (k Keys) UpstreamLink(taskID string) string { return k.prefix + ":upstream:" + taskID }

// Endpoint health (internal/health): every endpoint's keys share the hash
// tag {endpoints}, so one script records a batch of outcomes of many
// endpoints, with the index and the disabled set, atomically.

// EndpointHealth is the health hash of webhook endpoint id (a hash of its
// normalized URL, health.EndpointID). EndpointHealth("") is what their
// names start with: a script that finds endpoint ids in a set is given it,
// and appends each id (health's disabled.lua).
func (k Keys) EndpointHealth(id string) string { return k.prefix + ":{endpoints}:ep:" + id }

// Endpoints is the zset of the endpoints with a health record, scored by
// the ms of their last recorded outcome.
func (k Keys) Endpoints() string { return k.prefix + ":{endpoints}:index" }

// EndpointsDisabled is the set of the ids of disabled endpoints: what every
// relay reads, about once a second, to skip their deliveries.
func (k Keys) EndpointsDisabled() string { return k.prefix + ":{endpoints}:disabled" }

// EndpointConfigs is the zset of the push configs seen sending to
// endpoint id (each member the JSON array [task id, config id]), scored
// by the ms of their last recorded outcome: what the endpoint's page
// lists (bounded).
func (k Keys) EndpointConfigs(id string) string {
	return k.prefix + ":{endpoints}:ep:" + id + ":configs"
}

// ConfigHealth is the health of one push config (task taskID, config
// configID): in the task's partition, so a flush records the configs of
// one partition in one script call, and the key lives on the task's node.
// The task id's length keeps ids that contain ":" from colliding.
func (k Keys) ConfigHealth(taskID, configID string) string {
	return k.Tag(k.Partition(taskID)) + "cfghealth:" + strconv.Itoa(len(taskID)) + ":" + taskID + ":" + configID
}

// Signing names the signing key set (a hash of keys by id) and the id of
// the current key.
func (k Keys) Signing() (set, current string) {
	return k.prefix + ":{jwks}", k.prefix + ":{jwks}:current"
}

// StandardSigning names the ed25519 key set that signs Standard Webhooks
// v1a signatures, and its current key: kept like Signing's, apart from it.
func (k Keys) StandardSigning() (set, current string) {
	return k.prefix + ":{swhkeys}", k.prefix + ":{swhkeys}:current"
}

// Group is the consumer group of the delivery streams and of the work
// queues' streams.
const Group = "workers"
