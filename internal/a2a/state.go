package a2a

// TaskState is the lifecycle state of a task (canonical names are the v0.3
// strings; codecs map them to each dialect).
type TaskState string

// Task states.
const (
	StateSubmitted     TaskState = "submitted"
	StateWorking       TaskState = "working"
	StateInputRequired TaskState = "input-required"
	StateAuthRequired  TaskState = "auth-required"
	StateCompleted     TaskState = "completed"
	StateFailed        TaskState = "failed"
	StateCanceled      TaskState = "canceled"
	StateRejected      TaskState = "rejected"
	StateUnknown       TaskState = "unknown"
)

// Terminal reports whether a task in state s can never change again.
func (s TaskState) Terminal() bool {
	switch s {
	case StateCompleted, StateFailed, StateCanceled, StateRejected:
		return true
	}
	return false
}

// Interrupted reports whether s waits for the client (input or auth).
func (s TaskState) Interrupted() bool {
	return s == StateInputRequired || s == StateAuthRequired
}

// Valid reports whether s is a known state.
func (s TaskState) Valid() bool {
	switch s {
	case StateSubmitted, StateWorking, StateInputRequired, StateAuthRequired,
		StateCompleted, StateFailed, StateCanceled, StateRejected, StateUnknown:
		return true
	}
	return false
}

// legalMoves lists, for each non-terminal state, where it may go next.
// A non-terminal state may also repeat itself (a progress update).
var legalMoves = map[TaskState][]TaskState{
	StateSubmitted:     {StateWorking, StateFailed, StateCanceled, StateRejected},
	StateWorking:       {StateInputRequired, StateAuthRequired, StateCompleted, StateFailed, StateCanceled},
	StateInputRequired: {StateWorking, StateFailed, StateCanceled},
	StateAuthRequired:  {StateWorking, StateFailed, StateCanceled},
}

// CanTransition reports whether a task may move from one state to another.
func CanTransition(from, to TaskState) bool {
	if from.Terminal() || !to.Valid() || to == StateUnknown {
		return false
	}
	if from == to {
		return from != StateSubmitted
	}
	for _, s := range legalMoves[from] {
		if s == to {
			return true
		}
	}
	return false
}
