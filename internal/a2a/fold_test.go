package a2a

import (
	"errors"
	"reflect"
	"testing"
)

// Folding a task's events from its creation, or from a base, gives the
// task those events made; without either there is nothing to fold onto.
func TestFoldRebuildsTheTask(t *testing.T) {
	t.Parallel()
	created := Task{ID: "t", ContextID: "c", Status: TaskStatus{State: StateSubmitted},
		History: []Message{{MessageID: "m1", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}}}}
	events := []Event{
		{Kind: EventTask, TaskID: "t", ContextID: "c", Task: &created},
		{Kind: EventStatus, TaskID: "t", Status: &TaskStatus{State: StateWorking}},
		{Kind: EventArtifact, TaskID: "t", Artifact: &Artifact{ArtifactID: "a", Parts: []Part{{Kind: PartText, Text: "x"}}}},
		{Kind: EventArtifact, TaskID: "t", Append: true, Artifact: &Artifact{ArtifactID: "a", Parts: []Part{{Kind: PartText, Text: "y"}}}},
		{Kind: EventMessage, TaskID: "t", Message: &Message{MessageID: "m2", Role: RoleUser}},
		{Kind: EventStatus, TaskID: "t", Status: &TaskStatus{State: StateCompleted}},
	}
	want := created
	want.History = append([]Message(nil), created.History...)
	for _, ev := range events[1:] {
		if err := Apply(&want, ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Fold(nil, events)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Fold from the creation = %+v, %v; want %+v", got, err, want)
	}
	mid, err := Fold(nil, events[:3])
	if err != nil || mid.Status.State != StateWorking || len(mid.Artifacts) != 1 {
		t.Fatalf("Fold of the first three = %+v, %v", mid, err)
	}
	got, err = Fold(&mid, events[3:])
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Fold from a base = %+v, %v; want %+v", got, err, want)
	}
	if _, err := Fold(nil, events[1:]); !errors.Is(err, ErrNoOrigin) {
		t.Fatalf("Fold without creation or base: %v, want ErrNoOrigin", err)
	}
	if _, err := Fold(nil, nil); !errors.Is(err, ErrNoOrigin) {
		t.Fatalf("Fold of nothing: %v, want ErrNoOrigin", err)
	}
}
