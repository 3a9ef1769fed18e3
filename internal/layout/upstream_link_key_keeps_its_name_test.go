package layout

import "testing"

// The link of a task to its upstream agent's task keeps the name relay
// gave it before layout named it (<prefix>:upstream:<taskID>, no partition
// tag), so links stored by an earlier relay are still found.
func TestUpstreamLinkKeyKeepsItsName(t *testing.T) {
	t.Parallel()
	k := New("pfx", 16)
	for id, want := range map[string]string{
		"task-1": "pfx:upstream:task-1",
		"x:y":    "pfx:upstream:x:y",
		"{p}":    "pfx:upstream:{p}",
	} {
		if got := k.UpstreamLink(id); got != want {
			t.Errorf("UpstreamLink(%q) = %q, want %q", id, got, want)
		}
	}
	if got, want := New("", 0).UpstreamLink("t"), "relay:upstream:t"; got != want {
		t.Errorf("default prefix: UpstreamLink = %q, want %q", got, want)
	}
}
