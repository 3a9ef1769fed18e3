// Package queue owns relay's Redis layout: the key names, the Lua scripts,
// the atomic commit of a task change, and (as delivery lands) the Redis
// Streams mechanics of the delivery queue. It stores opaque bytes and knows
// nothing of A2A: callers bring snapshots and events already encoded.
//
// Keys are partitioned by task: partition p = fnv32a(taskID) mod P, and every
// key of a task carries the hash tag {p}, so one Lua script can touch all of
// them atomically on a single Redis and on Redis Cluster alike.
package queue

import (
	"hash/fnv"
	"strconv"
)

// keys names every key relay writes under one prefix.
type keys struct {
	prefix     string
	partitions int
}

// partition returns the partition of a task id.
func (k keys) partition(taskID string) int {
	h := fnv.New32a()
	h.Write([]byte(taskID))
	return int(h.Sum32() % uint32(k.partitions))
}

func (k keys) tag(p int) string { return k.prefix + ":{" + strconv.Itoa(p) + "}:" }

// task returns the keys of one task: hash, event stream, push configs, the
// checkpoint of its event stream, and its partition's index.
func (k keys) task(taskID string) taskKeys {
	t := k.tag(k.partition(taskID))
	return taskKeys{
		hash:   t + "task:" + taskID,
		events: t + "events:" + taskID,
		push:   t + "push:" + taskID,
		base:   t + "base:" + taskID,
		index:  t + "tasks",
	}
}

// index returns the task index of partition p for owner: with client
// authentication every principal has indexes of its own, so listing never
// meets another tenant's tasks; "" is the shared index of RELAY_AUTH=none.
func (k keys) index(p int, owner string) string {
	if owner == "" {
		return k.tag(p) + "tasks"
	}
	return k.tag(p) + "tasks:" + owner
}

// deliveries is the delivery stream (of lane tokens) of partition p.
func (k keys) deliveries(p int) string { return k.tag(p) + "deliveries" }

// lane is the queue of one (task, config) pair. The task id's length keeps
// ids that contain ":" from colliding.
func (k keys) lane(taskID, configID string) string {
	return k.tag(k.partition(taskID)) + "lane:" + strconv.Itoa(len(taskID)) + ":" + taskID + ":" + configID
}

// lease is the lease of one lane: held by the token being worked on.
func (k keys) lease(taskID, configID string) string {
	return k.tag(k.partition(taskID)) + "lease:" + strconv.Itoa(len(taskID)) + ":" + taskID + ":" + configID
}

// compact is partition p's zset of tasks whose event streams are due for
// compaction.
func (k keys) compact(p int) string { return k.tag(p) + "compact" }

// record is the delivery record of notification id in partition p (one
// string, codec d1: record_codec.go). The Lua scripts build the same name
// from the partition prefix for the records of a lane they drop.
func (k keys) record(p int, id string) string { return k.tag(p) + "dl:" + id }

// legacyAttempts is the attempt list a previous relay kept beside record.
func (k keys) legacyAttempts(p int, id string) string { return k.tag(p) + "dla:" + id }

// taskDeliveries is the zset of a task's notification ids by creation ms.
func (k keys) taskDeliveries(taskID string) string {
	return k.tag(k.partition(taskID)) + "dl:task:" + taskID
}

// statusIndex is partition p's zset of the notification ids in status st
// (every status but delivered), by update ms.
func (k keys) statusIndex(p int, st string) string { return k.tag(p) + "dl:status:" + st }

// retries is partition p's zset of tokens waiting for their next attempt.
func (k keys) retries(p int) string { return k.tag(p) + "retries" }

// dead is partition p's stream of dead letters.
func (k keys) dead(p int) string { return k.tag(p) + "dead" }

// meta is the hash of facts fixed at first start (partition count).
func (k keys) meta() string { return k.prefix + ":meta" }

type taskKeys struct {
	hash, events, push, base, index string
}

// outbox is partition p's outbox stream: one entry per notification, in
// commit order, read by the partition's owner (outbox.go).
func (k keys) outbox(p int) string { return k.tag(p) + "outbox" }

// outboxOwner is the lease of partition p's outbox owner.
func (k keys) outboxOwner(p int) string { return k.tag(p) + "outbox:owner" }

// outboxOffset is the id of the last outbox entry of partition p up to
// which every notification is done (delivered, finished or parked).
func (k keys) outboxOffset(p int) string { return k.tag(p) + "outbox:offset" }

// parked is partition p's set of lanes that hold notifications parked for
// a retry: later notifications of such a lane queue behind them.
func (k keys) parked(p int) string { return k.tag(p) + "parked" }

// outboxRelays is the zset of the relays that own outboxes, scored by the
// time of their last pass (ms): their count sets each one's share.
func (k keys) outboxRelays() string { return k.prefix + ":outbox:relays" }

// outboxAdopted marks partition p's lanes as adopted by the outbox (see
// AdoptLanes).
func (k keys) outboxAdopted(p int) string { return k.tag(p) + "outbox:adopted" }

// outboxAdopting marks partition p while AdoptLanes reads its tokens: its
// delivery stream is not trimmed meanwhile.
func (k keys) outboxAdopting(p int) string { return k.tag(p) + "outbox:adopting" }
