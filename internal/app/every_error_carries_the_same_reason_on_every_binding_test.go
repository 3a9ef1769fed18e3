package app

import (
	"encoding/json"
	"fmt"
	"slices"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
)

// The adapters of every_binding_seen_by_a_client_test.go accept an error
// as one of the neutral kinds only when its google.rpc.ErrorInfo carries
// the reason (and domain) below, the same on every binding: the JSON-RPC
// error's data (v1.0), the HTTP+JSON body's details, the gRPC status's
// details. The A2A errors carry A2A's reasons; invalid params and missing
// credentials the names the official SDKs give them, by which their
// clients tell them from an internal error; a limit relay's own. A
// refused field adds a google.rpc.BadRequest naming it, which the kind
// then says ("invalid_params field url").

// eqReasons are the "domain reason" an error of each neutral kind may
// carry.
var eqReasons = map[string][]string{
	"not_found":                    {"a2a-protocol.org TASK_NOT_FOUND"},
	"not_cancelable":               {"a2a-protocol.org TASK_NOT_CANCELABLE"},
	"invalid_params":               {"a2a-protocol.org INVALID_PARAMS"},
	"unsupported_operation":        {"a2a-protocol.org UNSUPPORTED_OPERATION"},
	"extended_card_not_configured": {"a2a-protocol.org EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
	"version_not_supported":        {"a2a-protocol.org VERSION_NOT_SUPPORTED"},
	"unauthenticated":              {"a2a-protocol.org UNAUTHENTICATED"},
	"limited":                      {"relay LIMIT_REACHED", "relay QUOTA_EXCEEDED"},
}

// eqDetails is what an error's google.rpc details say: the ErrorInfo's
// "domain reason" (several ErrorInfos: "several"), and the field of a
// BadRequest's first violation.
type eqDetails struct{ info, a2aReason, field string }

func (d *eqDetails) addInfo(domain, reason string) {
	if d.info != "" {
		d.info, d.a2aReason = "several", ""
		return
	}
	d.info = domain + " " + reason
	if domain == "a2a-protocol.org" {
		d.a2aReason = reason
	}
}

// eqJSONDetails reads details in ProtoJSON (JSON-RPC data, HTTP+JSON
// details).
func eqJSONDetails(raw []json.RawMessage) eqDetails {
	var d eqDetails
	for _, r := range raw {
		var v struct {
			Type            string `json:"@type"`
			Reason, Domain  string
			FieldViolations []struct{ Field string } `json:"fieldViolations"`
		}
		if json.Unmarshal(r, &v) != nil {
			continue
		}
		switch v.Type {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			d.addInfo(v.Domain, v.Reason)
		case "type.googleapis.com/google.rpc.BadRequest":
			if len(v.FieldViolations) > 0 {
				d.field = v.FieldViolations[0].Field
			}
		}
	}
	return d
}

// eqGRPCDetails reads a gRPC status's details.
func eqGRPCDetails(st *status.Status) eqDetails {
	var d eqDetails
	for _, x := range st.Details() {
		switch v := x.(type) {
		case *errdetails.ErrorInfo:
			d.addInfo(v.GetDomain(), v.GetReason())
		case *errdetails.BadRequest:
			if len(v.GetFieldViolations()) > 0 {
				d.field = v.GetFieldViolations()[0].GetField()
			}
		}
	}
	return d
}

// reason is the A2A reason the details carry ("" for none or another
// domain's).
func (d eqDetails) reason() string { return d.a2aReason }

// checked is kind when d carries its reason (with " field f" when a
// BadRequest names f), and otherwise what, with what d carries.
func (d eqDetails) checked(kind, what string) string {
	if kind != "" && slices.Contains(eqReasons[kind], d.info) {
		if d.field != "" {
			return kind + " field " + d.field
		}
		return kind
	}
	return fmt.Sprintf("%s (ErrorInfo %q, BadRequest field %q)", what, d.info, d.field)
}
