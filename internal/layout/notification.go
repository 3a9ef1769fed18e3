package layout

import (
	"crypto/sha1" //nolint:gosec // an id, not a secret: commit.lua's redis.sha1hex, which this must match
	"encoding/hex"
	"strconv"
)

// NotificationID is the id of the notification of event eventID (its
// stream id) of task taskID to config configID, as commit.lua computes it:
// "<partition>.<first 32 hex digits of sha1(task|event|config)>". It is the
// same for every delivery of that notification, a replay's included, so
// that receivers dedupe on it.
func (k Keys) NotificationID(taskID, eventID, configID string) string {
	sum := sha1.Sum([]byte(taskID + "|" + eventID + "|" + configID))
	return strconv.Itoa(k.Partition(taskID)) + "." + hex.EncodeToString(sum[:])[:32]
}
