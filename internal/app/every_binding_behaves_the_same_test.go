package app

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2arelay/relay/internal/a2a/jsonrpc"
)

// This file runs one table of behaviours over the three bindings
// (JSON-RPC, HTTP+JSON, gRPC), each seen through a small adapter that
// answers in binding-neutral terms: a task's id, state name and history
// length, a page's ids, total and whether a next token came, and an error
// as a neutral kind ("not_found", "not_cancelable", "invalid_params",
// "unauthenticated"). Each adapter maps its binding's errors strictly as
// its section of the spec says (JSON-RPC code; HTTP status, google.rpc
// status name and ErrorInfo reason; gRPC code and ErrorInfo reason), so a
// binding that answers differently from the others fails its row.
// Streams and subscriptions are not in this table yet.

// eqSendArgs is one message to the demo agent.
type eqSendArgs struct {
	contextID string
	taskID    string // a message continuing this task
	outcome   string // the demo's outcome; "": completed
	pushURL   string // a push config sent with the message (token eqPushToken)
	blocking  bool
	steps     int // demo steps; 0: completes at once
	delayMs   int
}

type eqTask struct {
	ID, State string
	History   int
}

type eqPage struct {
	IDs   []string
	Total int
	More  bool // a nextPageToken came
	Token string
}

type eqListArgs struct {
	contextID, status, pageToken string
	pageSize                     *int
}

// binding is one A2A binding as a client sees it. Every method returns an
// error kind, "" on success; an answer that is none of the neutral kinds
// comes back as a kind describing it, so it differs from every want.
type binding interface {
	send(key string, a eqSendArgs) (eqTask, string)
	get(key, id string, historyLength *int) (eqTask, string)
	list(key string, a eqListArgs) (eqPage, string)
	cancel(key, id string) (eqTask, string)
	createConfig(key, task, id, url string) (string, string) // the config id
	getConfig(key, task, id string) (string, string)
	listConfigs(key, task string) ([]string, string)
	deleteConfig(key, task, id string) string
	extendedCard(key string) string
	// withVersion is the binding sending A2A-Version v (gRPC: the
	// a2a-version metadata) instead of 1.0.
	withVersion(v string) binding
	streamBinding
}

var eqMessageSeq atomic.Int64

func eqMessageID() string { return fmt.Sprintf("eq-%d", eqMessageSeq.Add(1)) }

func eqDemo(a eqSendArgs) map[string]any {
	opts := map[string]any{"steps": a.steps}
	if a.delayMs > 0 {
		opts["delayMs"] = a.delayMs
	}
	if a.outcome != "" {
		opts["outcome"] = a.outcome
	}
	return opts
}

// ---- JSON-RPC ----

type jsonrpcBinding struct{ url, version string }

// eqHTTP sends one request and returns status and body; a transport
// failure is returned as an error kind.
func eqHTTP(method, u string, body any, headers ...string) (int, []byte, string) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, "encode: " + err.Error()
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return 0, nil, "request: " + err.Error()
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] != "" {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, "transport: " + err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, "read: " + err.Error()
	}
	return resp.StatusCode, b, ""
}

func eqAuth(key string) string {
	if key == "" {
		return ""
	}
	return "Bearer " + key
}

func (b jsonrpcBinding) do(key, method string, params, out any) string {
	status, body, kind := eqHTTP(http.MethodPost, b.url+"/",
		map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
		"Content-Type", "application/json", "A2A-Version", cmp.Or(b.version, "1.0"), "Authorization", eqAuth(key))
	if kind != "" {
		return kind
	}
	var res rpcResult
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Sprintf("status %d, not JSON-RPC: %s", status, body)
	}
	if res.Error != nil {
		return eqRPCKind(res.Error.Code, status, res.Error.Message)
	}
	if out != nil {
		if err := json.Unmarshal(res.Result, out); err != nil {
			return fmt.Sprintf("decode %s: %v", res.Result, err)
		}
	}
	return ""
}

// eqRPCKind is the neutral kind of a JSON-RPC error answered with HTTP
// status (0: inside a stream).
func eqRPCKind(code, status int, msg string) string {
	switch code {
	case jsonrpc.CodeTaskNotFound:
		return "not_found"
	case jsonrpc.CodeTaskNotCancelable:
		return "not_cancelable"
	case jsonrpc.CodeInvalidParams:
		return "invalid_params"
	case jsonrpc.CodeUnsupportedOperation:
		return "unsupported_operation"
	case jsonrpc.CodeExtendedCardNotConfig:
		return "extended_card_not_configured"
	case jsonrpc.CodeVersionNotSupported:
		return "version_not_supported"
	case jsonrpc.CodeUnauthenticated:
		if status == http.StatusUnauthorized {
			return "unauthenticated"
		}
	case jsonrpc.CodeLimited:
		if status == http.StatusTooManyRequests {
			return "limited"
		}
	}
	return fmt.Sprintf("JSON-RPC error %d (HTTP %d): %s", code, status, msg)
}

func (t v10Task) eqView() eqTask { return eqTask{t.ID, t.Status.State, len(t.History)} }

func eqV10Send(a eqSendArgs) map[string]any {
	msg := v10Message("hello", map[string]any{"messageId": eqMessageID(), "metadata": demo(eqDemo(a))})
	if a.contextID != "" {
		msg["contextId"] = a.contextID
	}
	if a.taskID != "" {
		msg["taskId"] = a.taskID
	}
	conf := map[string]any{"returnImmediately": !a.blocking}
	if a.pushURL != "" {
		conf["taskPushNotificationConfig"] = map[string]any{"url": a.pushURL, "token": eqPushToken}
	}
	return map[string]any{"message": msg, "configuration": conf}
}

// eqPushToken is the token of the push configs a send carries.
const eqPushToken = "eq-push-token-0123456789"

// eqPBConfig is a's SendMessageConfiguration over gRPC.
func eqPBConfig(a eqSendArgs) *a2apb.SendMessageConfiguration {
	c := &a2apb.SendMessageConfiguration{ReturnImmediately: !a.blocking}
	if a.pushURL != "" {
		c.TaskPushNotificationConfig = &a2apb.TaskPushNotificationConfig{Url: a.pushURL, Token: eqPushToken}
	}
	return c
}

type eqList struct {
	Tasks         []v10Task `json:"tasks"`
	TotalSize     int       `json:"totalSize"`
	NextPageToken string    `json:"nextPageToken"`
}

func (l eqList) eqView() eqPage {
	p := eqPage{Total: l.TotalSize, More: l.NextPageToken != "", Token: l.NextPageToken}
	for _, t := range l.Tasks {
		p.IDs = append(p.IDs, t.ID)
	}
	return p
}

type eqConfig struct {
	ID     string `json:"id"`
	TaskID string `json:"taskId"`
}

type eqConfigs struct {
	Configs []eqConfig `json:"configs"`
}

func (l eqConfigs) ids() []string {
	ids := []string{}
	for _, c := range l.Configs {
		ids = append(ids, c.ID)
	}
	return ids
}

func (b jsonrpcBinding) send(key string, a eqSendArgs) (eqTask, string) {
	var res struct{ Task v10Task }
	kind := b.do(key, "SendMessage", eqV10Send(a), &res)
	return res.Task.eqView(), kind
}

func (b jsonrpcBinding) get(key, id string, historyLength *int) (eqTask, string) {
	params := map[string]any{"id": id}
	if historyLength != nil {
		params["historyLength"] = *historyLength
	}
	var task v10Task
	kind := b.do(key, "GetTask", params, &task)
	return task.eqView(), kind
}

func (b jsonrpcBinding) list(key string, a eqListArgs) (eqPage, string) {
	params := map[string]any{}
	if a.contextID != "" {
		params["contextId"] = a.contextID
	}
	if a.status != "" {
		params["status"] = a.status
	}
	if a.pageToken != "" {
		params["pageToken"] = a.pageToken
	}
	if a.pageSize != nil {
		params["pageSize"] = *a.pageSize
	}
	var l eqList
	kind := b.do(key, "ListTasks", params, &l)
	return l.eqView(), kind
}

func (b jsonrpcBinding) cancel(key, id string) (eqTask, string) {
	var task v10Task
	kind := b.do(key, "CancelTask", map[string]any{"id": id}, &task)
	return task.eqView(), kind
}

func (b jsonrpcBinding) createConfig(key, task, id, url string) (string, string) {
	var c eqConfig
	kind := b.do(key, "CreateTaskPushNotificationConfig", map[string]any{"taskId": task, "id": id, "url": url, "token": eqPushToken}, &c)
	return c.ID, kind
}

func (b jsonrpcBinding) getConfig(key, task, id string) (string, string) {
	var c eqConfig
	kind := b.do(key, "GetTaskPushNotificationConfig", map[string]any{"taskId": task, "id": id}, &c)
	return c.ID, kind
}

func (b jsonrpcBinding) listConfigs(key, task string) ([]string, string) {
	var l eqConfigs
	kind := b.do(key, "ListTaskPushNotificationConfigs", map[string]any{"taskId": task}, &l)
	return l.ids(), kind
}

func (b jsonrpcBinding) deleteConfig(key, task, id string) string {
	return b.do(key, "DeleteTaskPushNotificationConfig", map[string]any{"taskId": task, "id": id}, nil)
}

// ---- HTTP+JSON ----

type restBinding struct{ url, version string }

func (b restBinding) do(key, method, path string, body, out any) string {
	headers := []string{"A2A-Version", cmp.Or(b.version, "1.0"), "Authorization", eqAuth(key)}
	if body != nil {
		headers = append(headers, "Content-Type", "application/a2a+json")
	}
	st, raw, kind := eqHTTP(method, b.url+"/v1"+path, body, headers...)
	if kind != "" {
		return kind
	}
	if st != http.StatusOK {
		return eqRESTKind(st, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Sprintf("decode %s: %v", raw, err)
		}
	}
	return ""
}

// eqRESTKind is the neutral kind of an HTTP+JSON error body raw answered
// with HTTP status st (inside a stream: the code the body carries).
func eqRESTKind(st int, raw []byte) string {
	var res restResult
	if err := json.Unmarshal(raw, &res); err != nil || res.Error == nil || res.Error.Code != st {
		return fmt.Sprintf("HTTP %d, not a google.rpc.Status: %s", st, raw)
	}
	reason := ""
	for _, d := range res.Error.Details {
		var info struct{ Reason, Domain string }
		if json.Unmarshal(d, &info) == nil && info.Domain == "a2a-protocol.org" && info.Reason != "" {
			reason = info.Reason
		}
	}
	failed := st == http.StatusBadRequest && res.Error.Status == "FAILED_PRECONDITION"
	switch {
	case st == http.StatusNotFound && res.Error.Status == "NOT_FOUND" && reason == "TASK_NOT_FOUND":
		return "not_found"
	case failed && reason == "TASK_NOT_CANCELABLE":
		return "not_cancelable"
	case failed && reason == "UNSUPPORTED_OPERATION":
		return "unsupported_operation"
	case failed && reason == "EXTENDED_AGENT_CARD_NOT_CONFIGURED":
		return "extended_card_not_configured"
	case failed && reason == "VERSION_NOT_SUPPORTED":
		return "version_not_supported"
	case st == http.StatusBadRequest && res.Error.Status == "INVALID_ARGUMENT":
		return "invalid_params"
	case st == http.StatusUnauthorized && res.Error.Status == "UNAUTHENTICATED":
		return "unauthenticated"
	case st == http.StatusTooManyRequests && res.Error.Status == "RESOURCE_EXHAUSTED":
		return "limited"
	}
	return fmt.Sprintf("HTTP %d %s reason %q: %s", st, res.Error.Status, reason, res.Error.Message)
}

func (b restBinding) send(key string, a eqSendArgs) (eqTask, string) {
	var res struct{ Task v10Task }
	kind := b.do(key, http.MethodPost, "/message:send", eqV10Send(a), &res)
	return res.Task.eqView(), kind
}

func (b restBinding) get(key, id string, historyLength *int) (eqTask, string) {
	path := "/tasks/" + url.PathEscape(id)
	if historyLength != nil {
		path += "?historyLength=" + strconv.Itoa(*historyLength)
	}
	var task v10Task
	kind := b.do(key, http.MethodGet, path, nil, &task)
	return task.eqView(), kind
}

func (b restBinding) list(key string, a eqListArgs) (eqPage, string) {
	q := url.Values{}
	if a.contextID != "" {
		q.Set("contextId", a.contextID)
	}
	if a.status != "" {
		q.Set("status", a.status)
	}
	if a.pageToken != "" {
		q.Set("pageToken", a.pageToken)
	}
	if a.pageSize != nil {
		q.Set("pageSize", strconv.Itoa(*a.pageSize))
	}
	var l eqList
	kind := b.do(key, http.MethodGet, "/tasks?"+q.Encode(), nil, &l)
	return l.eqView(), kind
}

func (b restBinding) cancel(key, id string) (eqTask, string) {
	var task v10Task
	kind := b.do(key, http.MethodPost, "/tasks/"+url.PathEscape(id)+":cancel", map[string]any{}, &task)
	return task.eqView(), kind
}

func eqConfigsPath(task string) string {
	return "/tasks/" + url.PathEscape(task) + "/pushNotificationConfigs"
}

func (b restBinding) createConfig(key, task, id, u string) (string, string) {
	var c eqConfig
	kind := b.do(key, http.MethodPost, eqConfigsPath(task), map[string]any{"id": id, "url": u, "token": eqPushToken}, &c)
	return c.ID, kind
}

func (b restBinding) getConfig(key, task, id string) (string, string) {
	var c eqConfig
	kind := b.do(key, http.MethodGet, eqConfigsPath(task)+"/"+url.PathEscape(id), nil, &c)
	return c.ID, kind
}

func (b restBinding) listConfigs(key, task string) ([]string, string) {
	var l eqConfigs
	kind := b.do(key, http.MethodGet, eqConfigsPath(task), nil, &l)
	return l.ids(), kind
}

func (b restBinding) deleteConfig(key, task, id string) string {
	return b.do(key, http.MethodDelete, eqConfigsPath(task)+"/"+url.PathEscape(id), nil, nil)
}

// ---- gRPC ----

type grpcBinding struct {
	c       a2apb.A2AServiceClient
	version string
}

// ctx is the context of a call for the client of key.
func (b grpcBinding) ctx(key string) context.Context {
	ctx := bearer(key)
	if b.version != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "a2a-version", b.version)
	}
	return ctx
}

func eqGRPCKind(err error) string {
	if err == nil {
		return ""
	}
	st, ok := status.FromError(err)
	if !ok {
		return "not a gRPC status: " + err.Error()
	}
	reason := ""
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Domain == "a2a-protocol.org" {
			reason = info.Reason
		}
	}
	failed := st.Code() == codes.FailedPrecondition
	switch {
	case st.Code() == codes.NotFound && reason == "TASK_NOT_FOUND":
		return "not_found"
	case failed && reason == "TASK_NOT_CANCELABLE":
		return "not_cancelable"
	case failed && reason == "UNSUPPORTED_OPERATION":
		return "unsupported_operation"
	case failed && reason == "EXTENDED_AGENT_CARD_NOT_CONFIGURED":
		return "extended_card_not_configured"
	case failed && reason == "VERSION_NOT_SUPPORTED":
		return "version_not_supported"
	case st.Code() == codes.InvalidArgument:
		return "invalid_params"
	case st.Code() == codes.Unauthenticated:
		return "unauthenticated"
	case st.Code() == codes.ResourceExhausted:
		return "limited"
	}
	return fmt.Sprintf("gRPC %s reason %q: %s", st.Code(), reason, st.Message())
}

func eqPBView(t *a2apb.Task) eqTask {
	return eqTask{t.GetId(), t.GetStatus().GetState().String(), len(t.GetHistory())}
}

func (b grpcBinding) send(key string, a eqSendArgs) (eqTask, string) {
	md, err := structpb.NewStruct(demo(eqDemo(a)))
	if err != nil {
		return eqTask{}, err.Error()
	}
	msg := &a2apb.Message{MessageId: eqMessageID(), Role: a2apb.Role_ROLE_USER, ContextId: a.contextID, TaskId: a.taskID,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hello"}}}, Metadata: md}
	res, err := b.c.SendMessage(b.ctx(key), &a2apb.SendMessageRequest{Message: msg, Configuration: eqPBConfig(a)})
	return eqPBView(res.GetTask()), eqGRPCKind(err)
}

func (b grpcBinding) get(key, id string, historyLength *int) (eqTask, string) {
	req := &a2apb.GetTaskRequest{Id: id}
	if historyLength != nil {
		req.HistoryLength = proto.Int32(int32(*historyLength))
	}
	task, err := b.c.GetTask(b.ctx(key), req)
	return eqPBView(task), eqGRPCKind(err)
}

func (b grpcBinding) list(key string, a eqListArgs) (eqPage, string) {
	req := &a2apb.ListTasksRequest{ContextId: a.contextID, PageToken: a.pageToken}
	if a.status != "" {
		v, ok := a2apb.TaskState_value[a.status]
		if !ok {
			return eqPage{}, "no such state " + a.status
		}
		req.Status = a2apb.TaskState(v)
	}
	if a.pageSize != nil {
		req.PageSize = proto.Int32(int32(*a.pageSize))
	}
	res, err := b.c.ListTasks(b.ctx(key), req)
	p := eqPage{Total: int(res.GetTotalSize()), More: res.GetNextPageToken() != "", Token: res.GetNextPageToken()}
	for _, t := range res.GetTasks() {
		p.IDs = append(p.IDs, t.GetId())
	}
	return p, eqGRPCKind(err)
}

func (b grpcBinding) cancel(key, id string) (eqTask, string) {
	task, err := b.c.CancelTask(b.ctx(key), &a2apb.CancelTaskRequest{Id: id})
	return eqPBView(task), eqGRPCKind(err)
}

func (b grpcBinding) createConfig(key, task, id, u string) (string, string) {
	c, err := b.c.CreateTaskPushNotificationConfig(b.ctx(key), &a2apb.TaskPushNotificationConfig{TaskId: task, Id: id, Url: u, Token: eqPushToken})
	return c.GetId(), eqGRPCKind(err)
}

func (b grpcBinding) getConfig(key, task, id string) (string, string) {
	c, err := b.c.GetTaskPushNotificationConfig(b.ctx(key), &a2apb.GetTaskPushNotificationConfigRequest{TaskId: task, Id: id})
	return c.GetId(), eqGRPCKind(err)
}

func (b grpcBinding) listConfigs(key, task string) ([]string, string) {
	l, err := b.c.ListTaskPushNotificationConfigs(b.ctx(key), &a2apb.ListTaskPushNotificationConfigsRequest{TaskId: task})
	ids := []string{}
	for _, c := range l.GetConfigs() {
		ids = append(ids, c.GetId())
	}
	return ids, eqGRPCKind(err)
}

func (b grpcBinding) deleteConfig(key, task, id string) string {
	_, err := b.c.DeleteTaskPushNotificationConfig(b.ctx(key), &a2apb.DeleteTaskPushNotificationConfigRequest{TaskId: task, Id: id})
	return eqGRPCKind(err)
}

// ---- the table ----

// eqMust fails the test unless kind is "" (success).
func eqMust(t *testing.T, what, kind string) {
	t.Helper()
	if kind != "" {
		t.Fatalf("%s: %s", what, kind)
	}
}

func eqInt(n int) *int { return &n }

// eqCompleted sends a message the demo agent completes at once, blocking,
// and returns the task's id.
func eqCompleted(t *testing.T, b binding, key, contextID string) string {
	t.Helper()
	task, kind := b.send(key, eqSendArgs{contextID: contextID, blocking: true})
	eqMust(t, "blocking send", kind)
	if task.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("blocking send: %+v", task)
	}
	return task.ID
}

// eqLong sends a message the demo agent works on for a long while, not
// blocking, and returns the task's id.
func eqLong(t *testing.T, b binding, key string) string {
	t.Helper()
	task, kind := b.send(key, eqSendArgs{steps: 100, delayMs: 1000})
	eqMust(t, "non-blocking send", kind)
	return task.ID
}

// bindingCase is one behaviour: run drives a binding and returns its
// binding-neutral outcome, which must be want on every binding.
type bindingCase struct {
	name string
	want string
	run  func(t *testing.T, b binding) string
}

var bindingCases = []bindingCase{
	{"a blocking send answers with the completed task", "TASK_STATE_COMPLETED", func(t *testing.T, b binding) string {
		task, kind := b.send(aliceKey, eqSendArgs{blocking: true})
		eqMust(t, "send", kind)
		if task.ID == "" {
			return "no task id"
		}
		return task.State
	}},
	{"a non-blocking send answers before the task ends", "not terminal", func(t *testing.T, b binding) string {
		task, kind := b.send(aliceKey, eqSendArgs{steps: 100, delayMs: 1000})
		eqMust(t, "send", kind)
		defer b.cancel(aliceKey, task.ID)
		if task.ID == "" {
			return "no task id"
		}
		if task.State == "TASK_STATE_SUBMITTED" || task.State == "TASK_STATE_WORKING" {
			return "not terminal"
		}
		return task.State
	}},
	{"get limits the history to historyLength (the demo task holds the one user message)", "id ok; 0: 0; 1: 1; all: 1", func(t *testing.T, b binding) string {
		id := eqCompleted(t, b, aliceKey, "")
		none, kind := b.get(aliceKey, id, eqInt(0))
		eqMust(t, "get 0", kind)
		one, kind := b.get(aliceKey, id, eqInt(1))
		eqMust(t, "get 1", kind)
		all, kind := b.get(aliceKey, id, nil)
		eqMust(t, "get", kind)
		idOK := "id ok"
		if none.ID != id || one.ID != id || all.ID != id {
			idOK = "id differs"
		}
		return fmt.Sprintf("%s; 0: %d; 1: %d; all: %d", idOK, none.History, one.History, all.History)
	}},
	{"list pages a context's tasks with a total and a last page without a token",
		"page 1: 2 of 3, token; page 2: 1 of 3, no token; every task once", func(t *testing.T, b binding) string {
			var ids []string
			for range 3 {
				ids = append(ids, eqCompleted(t, b, aliceKey, "ctx-paging"))
			}
			first, kind := b.list(aliceKey, eqListArgs{contextID: "ctx-paging", pageSize: eqInt(2)})
			eqMust(t, "list", kind)
			if !first.More {
				return fmt.Sprintf("page 1: %d of %d, no token", len(first.IDs), first.Total)
			}
			second, kind := b.list(aliceKey, eqListArgs{contextID: "ctx-paging", pageSize: eqInt(2), pageToken: first.Token})
			eqMust(t, "list page 2", kind)
			seen := slices.Concat(first.IDs, second.IDs)
			slices.Sort(seen)
			slices.Sort(ids)
			once := "every task once"
			if !slices.Equal(seen, ids) {
				once = fmt.Sprintf("saw %v of %v", seen, ids)
			}
			token := func(p eqPage) string {
				if p.More {
					return "token"
				}
				return "no token"
			}
			return fmt.Sprintf("page 1: %d of %d, %s; page 2: %d of %d, %s; %s",
				len(first.IDs), first.Total, token(first), len(second.IDs), second.Total, token(second), once)
		}},
	{"list filters by state", "completed: 2; working: 1", func(t *testing.T, b binding) string {
		eqCompleted(t, b, aliceKey, "ctx-state")
		eqCompleted(t, b, aliceKey, "ctx-state")
		task, kind := b.send(aliceKey, eqSendArgs{contextID: "ctx-state", steps: 100, delayMs: 1000})
		eqMust(t, "send", kind)
		defer b.cancel(aliceKey, task.ID)
		// The long task is submitted, then working: wait for working.
		var working eqPage
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			working, kind = b.list(aliceKey, eqListArgs{contextID: "ctx-state", status: "TASK_STATE_WORKING"})
			eqMust(t, "list working", kind)
			if len(working.IDs) > 0 {
				break
			}
		}
		done, kind := b.list(aliceKey, eqListArgs{contextID: "ctx-state", status: "TASK_STATE_COMPLETED"})
		eqMust(t, "list completed", kind)
		return fmt.Sprintf("completed: %d; working: %d", len(done.IDs), len(working.IDs))
	}},
	{"cancel cancels a working task, and then refuses it as not cancelable", "TASK_STATE_CANCELED; again: not_cancelable", func(t *testing.T, b binding) string {
		id := eqLong(t, b, aliceKey)
		task, kind := b.cancel(aliceKey, id)
		if kind != "" {
			return kind
		}
		_, again := b.cancel(aliceKey, id)
		return task.State + "; again: " + again
	}},
	{"cancel of a completed task is not cancelable", "not_cancelable", func(t *testing.T, b binding) string {
		_, kind := b.cancel(aliceKey, eqCompleted(t, b, aliceKey, ""))
		return kind
	}},
	{"get of an unknown task is not found", "not_found", func(t *testing.T, b binding) string {
		_, kind := b.get(aliceKey, "no-such-task", nil)
		return kind
	}},
	{"cancel of an unknown task is not found", "not_found", func(t *testing.T, b binding) string {
		_, kind := b.cancel(aliceKey, "no-such-task")
		return kind
	}},
	{"a negative historyLength is invalid", "invalid_params", func(t *testing.T, b binding) string {
		_, kind := b.get(aliceKey, eqCompleted(t, b, aliceKey, ""), eqInt(-1))
		return kind
	}},
	{"pageSize 0 is invalid", "invalid_params", func(t *testing.T, b binding) string {
		_, kind := b.list(aliceKey, eqListArgs{pageSize: eqInt(0)})
		return kind
	}},
	{"a pageSize over the maximum is invalid", "invalid_params", func(t *testing.T, b binding) string {
		_, kind := b.list(aliceKey, eqListArgs{pageSize: eqInt(1_000_000)})
		return kind
	}},
	{"push configs are created, read, listed and deleted", "created c1; got c1; listed [c1]; deleted; then not_found, listed []",
		func(t *testing.T, b binding) string {
			id := eqCompleted(t, b, aliceKey, "")
			created, kind := b.createConfig(aliceKey, id, "c1", "http://127.0.0.1:9/hook")
			eqMust(t, "create", kind)
			got, kind := b.getConfig(aliceKey, id, "c1")
			eqMust(t, "get", kind)
			listed, kind := b.listConfigs(aliceKey, id)
			eqMust(t, "list", kind)
			eqMust(t, "delete", b.deleteConfig(aliceKey, id, "c1"))
			_, gone := b.getConfig(aliceKey, id, "c1")
			after, kind := b.listConfigs(aliceKey, id)
			eqMust(t, "list after delete", kind)
			return fmt.Sprintf("created %s; got %s; listed %v; deleted; then %s, listed %v", created, got, listed, gone, after)
		}},
	{"a push config with a URL that is not http(s) is invalid", "invalid_params", func(t *testing.T, b binding) string {
		_, kind := b.createConfig(aliceKey, eqCompleted(t, b, aliceKey, ""), "", "ftp://127.0.0.1/hook")
		return kind
	}},
	{"a push config of an unknown task is not found", "not_found", func(t *testing.T, b binding) string {
		_, kind := b.createConfig(aliceKey, "no-such-task", "c1", "http://127.0.0.1:9/hook")
		return kind
	}},
	{"another client's task is not found by any method",
		"get not_found; cancel not_found; list 0; create config not_found; get config not_found; list configs not_found; delete config not_found; owner still gets it",
		func(t *testing.T, b binding) string {
			id := eqCompleted(t, b, aliceKey, "ctx-alice")
			_, kind := b.createConfig(aliceKey, id, "c1", "http://127.0.0.1:9/hook")
			eqMust(t, "create", kind)
			_, get := b.get(bobKey, id, nil)
			_, cancel := b.cancel(bobKey, id)
			list, kind := b.list(bobKey, eqListArgs{contextID: "ctx-alice"})
			eqMust(t, "bob lists", kind)
			_, create := b.createConfig(bobKey, id, "c2", "http://127.0.0.1:9/hook")
			_, getConfig := b.getConfig(bobKey, id, "c1")
			_, listConfigs := b.listConfigs(bobKey, id)
			deleteConfig := b.deleteConfig(bobKey, id, "c1")
			owner := "owner still gets it"
			if task, kind := b.get(aliceKey, id, nil); kind != "" || task.State != "TASK_STATE_COMPLETED" {
				owner = fmt.Sprintf("owner gets %+v, %s", task, kind)
			} else if _, kind := b.getConfig(aliceKey, id, "c1"); kind != "" {
				owner = "owner's config: " + kind
			}
			return fmt.Sprintf("get %s; cancel %s; list %d; create config %s; get config %s; list configs %s; delete config %s; %s",
				get, cancel, len(list.IDs), create, getConfig, listConfigs, deleteConfig, owner)
		}},
	{"a request without credentials is unauthenticated", "list unauthenticated; send unauthenticated; get unauthenticated", func(t *testing.T, b binding) string {
		id := eqCompleted(t, b, aliceKey, "")
		_, list := b.list("", eqListArgs{})
		_, send := b.send("", eqSendArgs{blocking: true})
		_, get := b.get(otherWrng, id, nil)
		return fmt.Sprintf("list %s; send %s; get %s", list, send, get)
	}},
}

// Every binding behaves the same: one table of behaviours, each with one
// binding-neutral outcome, runs over JSON-RPC, HTTP+JSON and gRPC.
func TestEveryBindingBehavesTheSame(t *testing.T) {
	t.Parallel()
	bindings := map[string]func(r *relay) binding{
		"JSON-RPC":  func(r *relay) binding { return jsonrpcBinding{url: r.url} },
		"HTTP+JSON": func(r *relay) binding { return restBinding{url: r.url} },
		"gRPC":      func(r *relay) binding { return grpcBinding{c: grpcClient(r.t, r)} },
	}
	for _, name := range []string{"JSON-RPC", "HTTP+JSON", "gRPC"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := startTenantRelay(t, withGRPC)
			b := bindings[name](r)
			var cases []streamCase
			for _, c := range bindingCases {
				cases = append(cases, streamCase{name: c.name, want: c.want, run: c.run})
			}
			cases = append(cases, streamCases...)
			for _, c := range cases {
				want := c.want
				if name == "gRPC" && c.wantGRPC != "" {
					want = c.wantGRPC
				}
				t.Run(c.name, func(t *testing.T) {
					if got := c.run(t, b); got != want {
						t.Errorf("%s:\n got  %s\n want %s", name, got, want)
					}
				})
			}
		})
	}
}
