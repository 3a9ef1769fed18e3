package app

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestPushConfigsV03(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var task v03Task
	r.call("message/send", map[string]any{"message": v03Message("push03", nil),
		"configuration": map[string]any{"pushNotificationConfig": map[string]any{"url": "https://hooks.example.test/inline", "token": "tok-inline"}}}, &task)

	type cfg struct {
		TaskID string `json:"taskId"`
		Config struct {
			ID    string `json:"id"`
			URL   string `json:"url"`
			Token string `json:"token"`
		} `json:"pushNotificationConfig"`
	}
	var list []cfg
	r.call("tasks/pushNotificationConfig/list", map[string]any{"id": task.ID}, &list)
	if len(list) != 1 || list[0].Config.ID != task.ID || list[0].Config.Token != "****" {
		t.Fatalf("inline config not stored under the task id: %+v", list)
	}
	var set cfg
	r.call("tasks/pushNotificationConfig/set", map[string]any{"taskId": task.ID,
		"pushNotificationConfig": map[string]any{"id": "second", "url": "https://hooks.example.test/2",
			"authentication": map[string]any{"schemes": []string{"Bearer"}, "credentials": "secret"}}}, &set)
	if set.TaskID != task.ID || set.Config.ID != "second" {
		t.Fatalf("set returned %+v", set)
	}
	var got cfg
	r.call("tasks/pushNotificationConfig/get", map[string]any{"id": task.ID, "pushNotificationConfigId": "second"}, &got)
	if got.Config.URL != "https://hooks.example.test/2" {
		t.Fatalf("get returned %+v", got)
	}
	res := r.callRaw("tasks/pushNotificationConfig/delete", map[string]any{"id": task.ID, "pushNotificationConfigId": "second"})
	if res.Error != nil || string(res.Result) != "null" {
		t.Fatalf("delete = %s / %+v, want null", res.Result, res.Error)
	}
	// Deleting again is fine; getting it is -32001.
	if res := r.callRaw("tasks/pushNotificationConfig/delete", map[string]any{"id": task.ID, "pushNotificationConfigId": "second"}); res.Error != nil {
		t.Fatalf("second delete: %+v", res.Error)
	}
	wantError(t, r.callRaw("tasks/pushNotificationConfig/get", map[string]any{"id": task.ID, "pushNotificationConfigId": "second"}), -32001)
	wantError(t, r.callRaw("tasks/pushNotificationConfig/list", map[string]any{"id": "missing"}), -32001)
	wantError(t, r.callRaw("tasks/pushNotificationConfig/set", map[string]any{"taskId": "missing",
		"pushNotificationConfig": map[string]any{"url": "https://hooks.example.test/x"}}), -32001)
	for _, bad := range []string{"", "ftp://x.test/h", "not a url", "/relative"} {
		wantError(t, r.callRaw("tasks/pushNotificationConfig/set", map[string]any{"taskId": task.ID,
			"pushNotificationConfig": map[string]any{"url": bad}}), -32602)
	}
}

func TestPushConfigsV10(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var sent struct{ Task v10Task }
	r.call("SendMessage", map[string]any{"message": v10Message("push10", nil), "configuration": map[string]any{
		"taskPushNotificationConfig": map[string]any{"taskId": "", "url": "https://hooks.example.test/inline", "token": "t1"}}}, &sent)
	id := sent.Task.ID

	type cfg struct {
		ID     string `json:"id"`
		TaskID string `json:"taskId"`
		URL    string `json:"url"`
		Auth   *struct {
			Scheme      string `json:"scheme"`
			Credentials string `json:"credentials"`
		} `json:"authentication"`
	}
	var created cfg
	r.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": id, "url": "https://hooks.example.test/made",
		"authentication": map[string]any{"scheme": "Bearer", "credentials": "c"}}, &created)
	if created.ID == "" || created.ID == id || created.TaskID != id || created.Auth == nil || created.Auth.Scheme != "Bearer" {
		t.Fatalf("create without id should get a fresh UUID: %+v", created)
	}
	var list struct {
		Configs       []cfg  `json:"configs"`
		NextPageToken string `json:"nextPageToken"`
	}
	r.call("ListTaskPushNotificationConfigs", map[string]any{"taskId": id, "pageSize": nil}, &list)
	if len(list.Configs) != 2 {
		t.Fatalf("list = %+v, want the inline config and the created one", list)
	}
	var got cfg
	r.call("GetTaskPushNotificationConfig", map[string]any{"taskId": id, "id": created.ID}, &got)
	if got.URL != "https://hooks.example.test/made" {
		t.Fatalf("get = %+v", got)
	}
	var del json.RawMessage
	r.call("DeleteTaskPushNotificationConfig", map[string]any{"taskId": id, "id": created.ID}, &del)
	wantError(t, r.callRaw("GetTaskPushNotificationConfig", map[string]any{"taskId": id, "id": created.ID}), -32001)
	// Saving an existing id replaces it.
	for _, u := range []string{"https://hooks.example.test/a", "https://hooks.example.test/b"} {
		r.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": id, "id": "fixed", "url": u}, nil)
	}
	r.call("GetTaskPushNotificationConfig", map[string]any{"taskId": id, "id": "fixed"}, &got)
	if got.URL != "https://hooks.example.test/b" {
		t.Fatalf("replace kept %q", got.URL)
	}
}

func TestPushConfigsV01AndLimit(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	var task v01Task
	r.call("tasks/send", map[string]any{"id": "push01", "message": v01Message("p", nil),
		"pushNotification": map[string]any{"url": "https://hooks.example.test/01", "token": "abc"}}, &task)
	var got struct {
		ID     string `json:"id"`
		Config struct {
			URL   string `json:"url"`
			Token string `json:"token"`
		} `json:"pushNotificationConfig"`
	}
	r.call("tasks/pushNotification/get", map[string]any{"id": "push01"}, &got)
	if got.ID != "push01" || got.Config.URL != "https://hooks.example.test/01" || got.Config.Token != "****" {
		t.Fatalf("v0.1 get = %+v", got)
	}
	r.call("tasks/pushNotification/set", map[string]any{"id": "push01", "pushNotificationConfig": map[string]any{"url": "https://hooks.example.test/01b"}}, &got)
	if got.Config.URL != "https://hooks.example.test/01b" {
		t.Fatalf("v0.1 set did not replace: %+v", got)
	}
	for i := range 15 {
		r.call("CreateTaskPushNotificationConfig", map[string]any{"taskId": "push01", "id": fmt.Sprint("c", i), "url": "https://hooks.example.test/n"}, nil)
	}
	wantError(t, r.callRaw("CreateTaskPushNotificationConfig", map[string]any{"taskId": "push01", "id": "one-too-many", "url": "https://hooks.example.test/n"}), -32602)
}

func TestListTasks(t *testing.T) {
	t.Parallel()
	r := startRelay(t, nil)
	ids := map[string]bool{}
	for i := range 7 {
		var res struct{ Task v10Task }
		outcome := "completed"
		if i%3 == 0 {
			outcome = "failed"
		}
		r.call("SendMessage", map[string]any{"message": v10Message(fmt.Sprint("list", i), map[string]any{"contextId": "ctx-list",
			"metadata": demo(map[string]any{"outcome": outcome, "steps": 0})})}, &res)
		ids[res.Task.ID] = true
	}
	r.call("SendMessage", map[string]any{"message": v10Message("elsewhere", nil)}, nil)

	type page struct {
		Tasks         []v10Task `json:"tasks"`
		NextPageToken string    `json:"nextPageToken"`
		PageSize      int       `json:"pageSize"`
		TotalSize     int       `json:"totalSize"`
	}
	seen := map[string]bool{}
	token := ""
	for pages := 0; ; pages++ {
		var p page
		r.call("ListTasks", map[string]any{"contextId": "ctx-list", "pageSize": 3, "pageToken": token, "status": "UNRECOGNIZED"}, &p)
		for _, tk := range p.Tasks {
			if !ids[tk.ID] || seen[tk.ID] {
				t.Fatalf("page %d: unexpected or repeated task %s", pages, tk.ID)
			}
			if len(tk.Artifacts) != 0 {
				t.Fatalf("artifacts listed without includeArtifacts")
			}
			seen[tk.ID] = true
		}
		if token = p.NextPageToken; token == "" {
			break
		}
		if pages > 5 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 7 {
		t.Fatalf("listed %d of 7 tasks", len(seen))
	}
	var failed page
	r.call("ListTasks", map[string]any{"contextId": "ctx-list", "status": "TASK_STATE_FAILED", "includeArtifacts": true, "pageSize": nil}, &failed)
	if len(failed.Tasks) != 3 || failed.TotalSize != 3 {
		t.Fatalf("status filter: %d tasks, total %d, want 3", len(failed.Tasks), failed.TotalSize)
	}
	var all page
	r.call("ListTasks", map[string]any{}, &all)
	if len(all.Tasks) != 8 || all.TotalSize != 8 || all.NextPageToken != "" {
		t.Fatalf("unfiltered: %d tasks, total %d, token %q", len(all.Tasks), all.TotalSize, all.NextPageToken)
	}
	wantError(t, r.callRaw("ListTasks", map[string]any{"pageToken": "garbage!"}), -32602)
	wantError(t, r.callRaw("ListTasks", map[string]any{"status": "TASK_STATE_BOGUS"}), -32602)
	wantError(t, r.callRaw("ListTasks", map[string]any{"pageSize": "ten"}), -32602)
}
