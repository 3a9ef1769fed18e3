package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
)

// codec translates one dialect's params and results to and from the
// canonical model. Each dialect has one, stateless.
type codec interface {
	decodeSend(params json.RawMessage) (SendParams, *int, error)
	decodeTaskQuery(params json.RawMessage) (id string, historyLength *int, err error)
	decodePushSet(params json.RawMessage) (PushConfig, error)
	decodePushRef(params json.RawMessage) (taskID, configID string, err error)
	encodeTask(t Task) any
	encodeSendResult(t Task) any
	encodePush(c PushConfig) any
	encodePushList(cs []PushConfig) any
	encodeDeleted() any
	// wireField spells a field named in the canonical model (v0.3
	// MessageSendParams for a send, TaskPushNotificationConfig for a
	// push-config set) as this dialect's request does.
	wireField(send bool, field string) string
}

// inWire renames the field of a *FieldError that the service returned to
// the spelling of cd's requests; other errors pass as they are.
func inWire(cd codec, send bool, err error) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return err
	}
	w := *fe
	w.Field = cd.wireField(send, fe.Field)
	return &w
}

// pushPrefix starts the canonical name of every push config field.
const pushPrefix = "pushNotificationConfig."

// codecFor returns the codec of dialect d.
func codecFor(d Dialect) codec {
	switch d {
	case V01:
		return v01{}
	case V10:
		return v10{}
	}
	return v03{}
}

// decodeSend decodes a send in dialect d and checks what the dialects
// share: metadata, wherever a client may put it, is an object.
func decodeSend(d Dialect, params json.RawMessage) (SendParams, *int, error) {
	p, hl, err := codecFor(d).decodeSend(params)
	if err != nil {
		return p, hl, err
	}
	if err := checkHistoryLength(hl); err != nil {
		return SendParams{}, nil, err
	}
	if err := checkMetadata(p.Metadata, "metadata"); err != nil {
		return SendParams{}, nil, err
	}
	if err := checkMetadata(p.Message.Metadata, "message.metadata"); err != nil {
		return SendParams{}, nil, err
	}
	for i, part := range p.Message.Parts {
		if err := checkMetadata(part.Metadata, fmt.Sprintf("message.parts[%d].metadata", i)); err != nil {
			return SendParams{}, nil, err
		}
	}
	if err := p.takeWebhookOptions(); err != nil {
		return SendParams{}, nil, err
	}
	return p, hl, nil
}

// checkMetadata requires a metadata value, when present, to be a JSON
// object (A2A: a map of string keys); null is as good as absent.
func checkMetadata(raw json.RawMessage, where string) error {
	if metadataOK(raw) {
		return nil
	}
	return InvalidParams("%s must be an object", where)
}

// checkHistoryLength refuses a negative historyLength. A2A gives a meaning
// to an unset one (the server's default: relay returns all history), to 0
// (no history) and to n > 0 (the last n messages), and none to a negative
// one, which relay used to take for "no limit".
func checkHistoryLength(hl *int) error {
	if hl != nil && *hl < 0 {
		return InvalidParams("historyLength must not be negative, got %d", *hl)
	}
	return nil
}

// decodeParams unmarshals params into v, turning any failure into KindInvalidParams.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return InvalidParams("params are required")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return InvalidParams("%s", describeJSONError(err))
	}
	return nil
}

// describeJSONError says what was wrong with a JSON value without leaking Go names.
func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Sprintf("expected an object, got a JSON %s", te.Value)
		}
		return fmt.Sprintf("%s: unexpected JSON %s", te.Field, te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("malformed JSON at byte %d", se.Offset)
	}
	return "malformed JSON"
}

// checkParts validates canonical parts after decoding.
func checkParts(parts []Part, where string) error {
	for i, p := range parts {
		switch p.Kind {
		case PartText:
		case PartFile:
			if p.File == nil || (p.File.Bytes == "" && p.File.URI == "") {
				return InvalidParams("%s.parts[%d]: a file part needs file.bytes or file.uri", where, i)
			}
		case PartData:
			if len(p.Data) == 0 {
				return InvalidParams("%s.parts[%d]: a data part needs data", where, i)
			}
		default:
			return InvalidParams("%s.parts[%d]: unknown part kind %q", where, i, p.Kind)
		}
	}
	return nil
}

// checkID validates a required id taken from params.
func checkID(id, name string) error {
	if id == "" {
		return InvalidParams("%s is required", name)
	}
	return ValidateID(name, id)
}
