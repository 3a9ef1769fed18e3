package layout

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
)

// An event stream entry written with the fields commit.lua writes reads
// the same through DecodeEventEntry (the outbox's and the task store's
// reader) and through lib.lua's eventOf (the lanes' scripts'): one format,
// named once per language.
func TestAnEventEntryReadsAlikeInGoAndLua(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	stream := New(strings.TrimSuffix(prefix, ":"), 4).Task("t1").Events
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	traced, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"e", `{"kind":"status"}`, "v", "7", "t", tp, "d", "c 1" + EventConfigSep + "c2"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"e", `{"kind":"artifact"}`, "v", "8"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	lua := Script(`local ev, ver, tp, cf = eventOf(KEYS[1], ARGV[1])
local e = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])[1]
local named = {}
for _, c in ipairs({'c 1', 'c2', 'c', '1', 'c1'}) do
  if namesConfig(entryConfigs(e), c) then named[#named + 1] = c end
end
return {ev, ver, tp, cf, table.concat(named, ',')}`)
	for _, want := range []struct {
		id string
		EventEntry
	}{
		{traced, EventEntry{Event: []byte(`{"kind":"status"}`), Version: 7, TraceParent: tp, Configs: []string{"c 1", "c2"}}},
		{plain, EventEntry{Event: []byte(`{"kind":"artifact"}`), Version: 8}},
	} {
		msgs, err := rdb.XRange(ctx, stream, want.id, want.id).Result()
		if err != nil || len(msgs) != 1 {
			t.Fatalf("XRANGE %s: %v, %v", want.id, msgs, err)
		}
		got := DecodeEventEntry(msgs[0].Values)
		if string(got.Event) != string(want.Event) || got.Version != want.Version || got.TraceParent != want.TraceParent ||
			!slices.Equal(got.Configs, want.Configs) {
			t.Errorf("DecodeEventEntry(%s) = %+v, want %+v", want.id, got, want.EventEntry)
		}
		res, err := lua.Run(ctx, rdb, []string{stream}, want.id+" n1", want.id).Slice()
		if err != nil || len(res) != 5 || res[0] != string(want.Event) || res[1] != strconv.FormatInt(want.Version, 10) {
			t.Fatalf("eventOf(%s) = %v, %v; want the event and its version", want.id, res, err)
		}
		if lt, _ := res[2].(string); lt != want.TraceParent {
			t.Errorf("eventOf(%s) traceparent %q, want %q", want.id, lt, want.TraceParent)
		}
		if cf, _ := res[3].(string); !slices.Equal(EventConfigs(cf), want.Configs) {
			t.Errorf("eventOf(%s) configs %q, want %q", want.id, cf, want.Configs)
		}
		if named := res[4].(string); named != strings.Join(want.Configs, ",") {
			t.Errorf("namesConfig on %s names %q, want %q", want.id, named, want.Configs)
		}
	}
}
