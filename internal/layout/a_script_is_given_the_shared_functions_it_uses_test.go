package layout_test

import (
	"context"
	"crypto/sha1"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/a2arelay/relay/internal/redistest"
)

// defined returns the shared functions a script's lib defines, in order.
func defined(lib string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^local function (\w+)\(`).FindAllStringSubmatch(lib, -1) {
		out = append(out, m[1])
	}
	return out
}

// A script is given the shared functions its body names and those they
// call in turn, in lib.lua's order, and no other: Redis defines each at
// every call of the script.
func TestAScriptIsGivenTheSharedFunctionsItUses(t *testing.T) {
	t.Parallel()
	all := layout.LibFuncs()
	if len(all) < 8 || !slices.Contains(all, "recWrite") || !slices.Contains(all, "eventOf") {
		t.Fatalf("lib.lua's functions read as %v", all)
	}
	for body, want := range map[string][]string{
		"return 1":                          nil,
		"return recNew('t', 'c', 'e', '1')": {"recNew"},
		// eventOf reads the lane entry's event id with entryOf; before
		// compares stream ids with idParts.
		"local a = eventOf(KEYS[1], ARGV[1])\nreturn before('1-0', '2-0')": {"idParts", "before", "entryOf", "eventOf"},
		// outboxFloor orders with before, and so with idParts.
		"return outboxFloor(KEYS[1], ARGV[1])":                                                     {"idParts", "before", "outboxFloor"},
		"local r = recRead(KEYS[1], KEYS[2])\nrecWrite(KEYS[1], r, 5)\nreturn statusIndexes(3)[1]": {"statusIndexes", "recRead", "recWrite"},
	} {
		if got := defined(layout.LibFor(body)); !slices.Equal(got, want) {
			t.Errorf("the lib of %q defines %v, want %v", body, got, want)
		}
	}
	if got := defined(layout.LibFor("return {" + joinCalls(all) + "}")); !slices.Equal(got, all) {
		t.Errorf("a body that names every shared function gets %v, want %v", got, all)
	}
}

func joinCalls(names []string) string {
	s := ""
	for _, n := range names {
		s += n + ", "
	}
	return s
}

// A script given only what it uses runs in Redis: the functions it calls
// through others are defined before them.
func TestAScriptGivenPartOfTheSharedFunctionsRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := redistest.New(t)
	stream := prefix + "s"
	id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"e", "ev", "v", "3"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	body := "local ev, ver = eventOf(KEYS[1], ARGV[1])\nreturn {ev, ver, before(ARGV[2], ARGV[3]) and 1 or 0}"
	s := layout.Script(body)
	if want := fmt.Sprintf("%x", sha1.Sum([]byte(layout.LibFor(body)+body))); s.Hash() != want {
		t.Fatalf("Script's source is not its body after the shared functions it uses")
	}
	got, err := s.Run(ctx, rdb, []string{stream}, id+" n1", "1-5", "2-0").Slice()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "ev" || got[1] != "3" || got[2] != int64(1) {
		t.Fatalf("the script returned %v, want [ev 3 1]", got)
	}
}
