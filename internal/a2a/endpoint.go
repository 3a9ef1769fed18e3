package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Op is one operation of the A2A service, whatever binding and dialect
// carry it.
type Op int

// The operations.
const (
	OpSend Op = iota
	OpStream
	OpGet
	OpList
	OpCancel
	OpSubscribe
	OpPushSet
	OpPushGet
	OpPushList
	OpPushDelete
	OpExtendedCard
)

// Streaming reports whether op answers with a stream of events.
func (op Op) Streaming() bool { return op == OpStream || op == OpSubscribe }

// Call is one operation as a JSON binding (JSON-RPC, HTTP+JSON) hands it
// to the Endpoint: the operation, the dialect, and the request in that
// dialect's JSON.
type Call struct {
	Op      Op
	Dialect Dialect
	// Shared marks the methods v0.1 and v0.3 share (tasks/get,
	// tasks/cancel, tasks/resubscribe): the reply follows the dialect the
	// task was created in.
	Shared bool
	// Params is the request: the dialect's params object (v1.0: the
	// proto's request message in ProtoJSON, lowerCamel or snake_case
	// names). Absent or null where the operation takes none.
	Params json.RawMessage
	// Detached: nobody waits for the result (a JSON-RPC notification), so
	// a send does not block until its task ends.
	Detached bool
	// Fields are members of the request a binding takes from elsewhere
	// than Params (HTTP+JSON: the URL's path and query), named as the
	// dialect's params name them: they are set into the params object
	// (an absent Params is an empty one) after its names are normalized.
	// A member of Params of the same name with another value is refused
	// as invalid params.
	Fields map[string]any
	// LastEventID resumes a stream after the event of that id.
	LastEventID string
}

// EndpointDeps are what an Endpoint calls.
type EndpointDeps struct {
	// Service runs the operations (required).
	Service Service
	// Card answers OpExtendedCard; nil: no extended card is configured.
	Card *Card
	// Streams serves the streaming operations; nil: streaming is off
	// (KindUnsupportedOperation).
	Streams Streamer
	// Log receives internal errors and panics (required).
	Log *slog.Logger
}

// Endpoint runs the A2A operations for the bindings that carry a dialect's
// JSON (JSON-RPC, HTTP+JSON): it decodes the request with the dialect's
// codec, calls the Service, and encodes the result in the dialect; it opens
// the SSE subscriptions of the streaming operations. Its errors are *Error
// (or errors AsError maps), which the binding answers its own way.
type Endpoint struct {
	svc       Service
	card      *Card
	log       *slog.Logger
	streams   Streamer
	streamCfg StreamConfig
	shared    sharedEvents // the first events streams share
	closing   chan struct{}
	closeOnce sync.Once
}

// NewEndpoint returns an Endpoint over deps; cfg tunes its streams (zero
// fields take their defaults).
func NewEndpoint(deps EndpointDeps, cfg StreamConfig) (*Endpoint, error) {
	if deps.Service == nil || deps.Log == nil {
		return nil, errors.New("a2a: an Endpoint needs a Service and a Log")
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.MaxBuffer <= 0 {
		cfg.MaxBuffer = DefaultStreamMaxBuffer
	}
	return &Endpoint{svc: deps.Service, card: deps.Card, log: deps.Log, streams: deps.Streams, streamCfg: cfg,
		closing: make(chan struct{})}, nil
}

// CloseStreams ends every open stream (at shutdown: clients resume with
// Last-Event-ID on another instance or after the restart).
func (e *Endpoint) CloseStreams() { e.closeOnce.Do(func() { close(e.closing) }) }

// Do runs one operation that is not streaming, turning a panic into
// KindInternal. It returns the result in the shape of the dialect it
// returns (for a shared method, the task's).
func (e *Endpoint) Do(ctx context.Context, c Call) (res any, d Dialect, err error) {
	d = c.Dialect
	defer func() {
		if r := recover(); r != nil {
			e.log.ErrorContext(ctx, "panic in a2a handler", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			res, err = nil, &Error{Kind: KindInternal, Message: "internal error"}
		}
	}()
	if c.Params, err = c.params(); err != nil {
		return nil, d, err
	}
	return e.dispatch(ctx, c)
}

// params returns the call's params as its codec reads them: v1.0 names in
// lowerCamel (ProtoJSON: snake_case names are as good).
func (c Call) params() (json.RawMessage, error) {
	params := c.Params
	if c.Dialect == V10 {
		var err error
		if params, err = normalizeNames(params); err != nil {
			return nil, err
		}
	}
	if len(c.Fields) == 0 {
		return params, nil
	}
	obj := map[string]json.RawMessage{}
	if p := bytes.TrimSpace(params); len(p) > 0 && string(p) != "null" {
		if err := json.Unmarshal(p, &obj); err != nil {
			return nil, InvalidParams("the request body must be a JSON object")
		}
	}
	fields := make(map[string]any, len(c.Fields))
	for name, v := range c.Fields {
		if c.Dialect == V10 {
			name = lowerCamel(name) // ProtoJSON: snake_case names are as good
		}
		// Go's decoder reads names case-insensitively (as EqualFold
		// compares them): names that differ in case only name one field.
		for f := range fields {
			if strings.EqualFold(f, name) {
				return nil, InvalidParams("%s is given twice", name)
			}
		}
		fields[name] = v
	}
	for name, v := range fields {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("a2a: encode field %s: %w", name, err)
		}
		for given, gv := range obj { // (a body member in another case names the field too)
			if !strings.EqualFold(given, name) {
				continue
			}
			if !sameValue(gv, b) {
				return nil, InvalidParams("%s in the body is not the one the URL names", name)
			}
			delete(obj, given)
		}
		obj[name] = b
	}
	return json.Marshal(obj)
}

// sameValue reports whether two JSON values are equal as values.
func sameValue(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func (e *Endpoint) dispatch(ctx context.Context, c Call) (any, Dialect, error) {
	cd := codecFor(c.Dialect)
	// render picks the codec of a stored task for the methods v0.1 and v0.3 share.
	render := func(v TaskView) codec {
		if c.Shared && v.Dialect == V01 {
			return codecFor(V01)
		}
		return cd
	}
	switch c.Op {
	case OpSend:
		p, hl, err := decodeSend(c.Dialect, c.Params)
		if err != nil {
			return nil, c.Dialect, err
		}
		if c.Detached {
			p.Blocking = false
		}
		v, err := e.svc.Send(ctx, p)
		if err != nil {
			return nil, c.Dialect, inWire(cd, true, err)
		}
		return cd.encodeSendResult(WithHistory(v.Task, hl)), c.Dialect, nil
	case OpGet, OpCancel:
		id, hl, err := cd.decodeTaskQuery(c.Params)
		if err != nil {
			return nil, c.Dialect, err
		}
		var v TaskView
		if c.Op == OpGet {
			v, err = e.svc.GetTask(ctx, id)
		} else {
			v, err = e.svc.CancelTask(ctx, id)
		}
		if err != nil {
			return nil, c.Dialect, err
		}
		return render(v).encodeTask(WithHistory(v.Task, hl)), c.Dialect, nil
	case OpList:
		return e.list(ctx, c.Params)
	case OpExtendedCard:
		if e.card == nil || !e.card.HasExtended() {
			return nil, c.Dialect, noExtendedCard(c.Dialect)
		}
		doc, err := e.card.Extended(ctx)
		if err != nil {
			return nil, c.Dialect, err
		}
		return doc, c.Dialect, nil
	case OpPushSet, OpPushGet, OpPushList, OpPushDelete:
		return e.push(ctx, c, cd)
	}
	return nil, c.Dialect, Errorf(KindUnsupportedOperation, "operation %d is not offered", c.Op)
}

// push runs the push-config operations.
func (e *Endpoint) push(ctx context.Context, c Call, cd codec) (any, Dialect, error) {
	d := c.Dialect
	if c.Op == OpPushSet {
		pc, err := cd.decodePushSet(c.Params)
		if err != nil {
			return nil, d, err
		}
		pc.Dialect = d
		if pc, err = e.svc.SetPushConfig(ctx, pc); err != nil {
			return nil, d, inWire(cd, false, err)
		}
		return cd.encodePush(pc), d, nil
	}
	taskID, cfgID, err := cd.decodePushRef(c.Params)
	if err != nil {
		return nil, d, err
	}
	switch c.Op {
	case OpPushGet:
		pc, err := e.svc.GetPushConfig(ctx, taskID, cfgID)
		if err != nil {
			return nil, d, err
		}
		return cd.encodePush(pc), d, nil
	case OpPushList:
		cs, err := e.svc.ListPushConfigs(ctx, taskID)
		if err != nil {
			return nil, d, err
		}
		return cd.encodePushList(cs), d, nil
	}
	if err := e.svc.DeletePushConfig(ctx, taskID, cfgID); err != nil {
		return nil, d, err
	}
	return cd.encodeDeleted(), d, nil
}

// noExtendedCard is the error for an extended card relay does not offer.
// Its card declares capabilities.extendedAgentCard only when one is
// configured, so v1.0 asks for UnsupportedOperationError (§3.3.4: the
// capability is absent); v0.3 had its own code for it, -32007
// (AuthenticatedExtendedCardNotConfiguredError).
func noExtendedCard(d Dialect) error {
	if d == V10 {
		return Errorf(KindUnsupportedOperation, "this agent offers no extended agent card (its card does not declare capabilities.extendedAgentCard)")
	}
	return Errorf(KindExtendedCardNotConfigured, "no extended agent card is configured")
}
