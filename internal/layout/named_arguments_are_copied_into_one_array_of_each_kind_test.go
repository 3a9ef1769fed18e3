package layout_test

import (
	"context"
	"slices"
	"testing"

	"github.com/a2arelay/relay/internal/redistest"
)

// Args copies a's strings and ints, at the call, into one array of each
// kind made for it (three allocations in all, the list included, however
// many fields): what the caller changes in a afterwards, or in its rest's
// slice, is not what is sent.
func TestNamedArgumentsAreCopiedIntoOneArrayOfEachKind(t *testing.T) {
	a := sample{Word: "word", Raw: []byte("raw"), Count: 1764172800000, Small: 300, Flag: true, Events: []string{"e1", "e2"}}
	if n := testing.AllocsPerRun(100, func() { sink = sampleScript.Args(&a) }); n > 3 {
		t.Errorf("Args allocates %v times, want 3", n)
	}
	args := sampleScript.Args(&a)
	a.Word, a.Count, a.Small, a.Flag, a.Events[0] = "changed", 1, 2, false, "changed"
	a.Raw = []byte("changed")
	rdb, _ := redistest.New(t)
	got, err := sampleScript.Run(context.Background(), rdb, nil, args...).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"word", "raw", "1764172800001", "number", "300", "1", "e1", "e2"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
