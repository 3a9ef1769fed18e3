package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/taskstore"
)

// ErrKeyReused: an idempotency key came again with another request than
// the one it was first committed with; nothing was committed.
var ErrKeyReused = errors.New("idempotency key reused for another request")

// Once makes an append apply at most once per idempotency key: the same
// request sent again (its answer was lost) commits nothing and gets the
// first answer back. The key's record is written with the commit, in the
// same atomic step (taskstore.CommitOnce), so that a crash can neither lose
// it nor apply the request twice.
type Once struct {
	// Key is the request's idempotency key (not empty).
	Key string
	// Hash identifies the request (a hex SHA-256: RequestHash): the key
	// sent again with another request is refused with ErrKeyReused.
	Hash string
	// Answer encodes what the request answers, from the task as the append
	// leaves it (at most taskstore.OnceAnswerMax bytes). It is recorded with
	// the key, and given back to the request's replays.
	Answer func(a2a.TaskView) ([]byte, error)
}

// replay is the answer recorded for o.Key, or ErrKeyReused when the key
// was recorded for another request.
func (o *Once) replay(first taskstore.Applied) ([]byte, error) {
	if first.Hash != o.Hash {
		return nil, fmt.Errorf("ingest: idempotency key %q: %w", o.Key, ErrKeyReused)
	}
	return first.Answer, nil
}

// AppendOnce is Append under an idempotency key: the first append under
// once.Key commits and records once.Answer's answer with it; an append
// under a recorded key commits nothing and returns the recorded answer
// (Replayed), or ErrKeyReused when once.Hash is not the recorded one.
func (c *Committer) AppendOnce(ctx context.Context, taskID string, once Once, events ...a2a.Event) (Appended, error) {
	return c.append(ctx, taskID, events, &once, nil, "", 0)
}

// Replay looks up the answer recorded for once.Key on taskID: ok is false
// when there is none (the key was never committed, or was forgotten), and
// the error ErrKeyReused when it was recorded for another request.
func (c *Committer) Replay(ctx context.Context, taskID string, once Once) (answer []byte, ok bool, err error) {
	first, err := c.store.Applied(ctx, taskID, once.Key)
	if errors.Is(err, taskstore.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	answer, err = once.replay(first)
	return answer, err == nil, err
}

// RequestHash identifies a request by its parts (a hex SHA-256, the
// length taskstore.Once wants): parts are length-prefixed, so that no two
// lists of parts hash alike by moving a boundary.
func RequestHash(parts ...[]byte) string {
	var b bytes.Buffer
	for _, p := range parts {
		fmt.Fprintf(&b, "%d:", len(p))
		b.Write(p)
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}
