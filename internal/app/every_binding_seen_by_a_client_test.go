package app

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2arelay/relay/internal/a2a/jsonrpc"
)

// The three bindings as a client sees them, each answering in the
// binding-neutral terms of every_binding_behaves_the_same_test.go.

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
		return eqRPCKind(res.Error.Code, status, res.Error.Message, res.Error.Data)
	}
	if out != nil {
		if err := json.Unmarshal(res.Result, out); err != nil {
			return fmt.Sprintf("decode %s: %v", res.Result, err)
		}
	}
	return ""
}

// eqRPCKind is the neutral kind of a JSON-RPC error answered with HTTP
// status (0: inside a stream), carrying data.
func eqRPCKind(code, status int, msg string, data errorData) string {
	kind := ""
	switch code {
	case jsonrpc.CodeTaskNotFound:
		kind = "not_found"
	case jsonrpc.CodeTaskNotCancelable:
		kind = "not_cancelable"
	case jsonrpc.CodeInvalidParams:
		kind = "invalid_params"
	case jsonrpc.CodeUnsupportedOperation:
		kind = "unsupported_operation"
	case jsonrpc.CodeExtendedCardNotConfig:
		kind = "extended_card_not_configured"
	case jsonrpc.CodeVersionNotSupported:
		kind = "version_not_supported"
	case jsonrpc.CodeUnauthenticated:
		if status == http.StatusUnauthorized {
			kind = "unauthenticated"
		}
	case jsonrpc.CodeLimited:
		if status == http.StatusTooManyRequests {
			kind = "limited"
		}
	}
	return eqJSONDetails(data).checked(kind, fmt.Sprintf("JSON-RPC error %d (HTTP %d): %s", code, status, msg))
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
	d := eqJSONDetails(res.Error.Details)
	reason, kind := d.reason(), ""
	failed := st == http.StatusBadRequest && res.Error.Status == "FAILED_PRECONDITION"
	switch {
	case st == http.StatusNotFound && res.Error.Status == "NOT_FOUND" && reason == "TASK_NOT_FOUND":
		kind = "not_found"
	case failed && reason == "TASK_NOT_CANCELABLE":
		kind = "not_cancelable"
	case failed && reason == "UNSUPPORTED_OPERATION":
		kind = "unsupported_operation"
	case failed && reason == "EXTENDED_AGENT_CARD_NOT_CONFIGURED":
		kind = "extended_card_not_configured"
	case failed && reason == "VERSION_NOT_SUPPORTED":
		kind = "version_not_supported"
	case st == http.StatusBadRequest && res.Error.Status == "INVALID_ARGUMENT":
		kind = "invalid_params"
	case st == http.StatusUnauthorized && res.Error.Status == "UNAUTHENTICATED":
		kind = "unauthenticated"
	case st == http.StatusTooManyRequests && res.Error.Status == "RESOURCE_EXHAUSTED":
		kind = "limited"
	}
	return d.checked(kind, fmt.Sprintf("HTTP %d %s: %s", st, res.Error.Status, res.Error.Message))
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
	d := eqGRPCDetails(st)
	reason, kind := d.reason(), ""
	failed := st.Code() == codes.FailedPrecondition
	switch {
	case st.Code() == codes.NotFound && reason == "TASK_NOT_FOUND":
		kind = "not_found"
	case failed && reason == "TASK_NOT_CANCELABLE":
		kind = "not_cancelable"
	case failed && reason == "UNSUPPORTED_OPERATION":
		kind = "unsupported_operation"
	case failed && reason == "EXTENDED_AGENT_CARD_NOT_CONFIGURED":
		kind = "extended_card_not_configured"
	case failed && reason == "VERSION_NOT_SUPPORTED":
		kind = "version_not_supported"
	case st.Code() == codes.InvalidArgument:
		kind = "invalid_params"
	case st.Code() == codes.Unauthenticated:
		kind = "unauthenticated"
	case st.Code() == codes.ResourceExhausted:
		kind = "limited"
	}
	return d.checked(kind, fmt.Sprintf("gRPC %s: %s", st.Code(), st.Message()))
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
