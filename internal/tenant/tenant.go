// Package tenant carries the principal a request acts for through a
// context: every task belongs to the principal that created it, and only
// that principal sees it. So does every context: a contextId (v0.1
// sessionId) names a context among its owner's tasks only, and two owners
// naming the same id have a context each (no error, so that an id tells
// nobody about another tenant's contexts). Whatever relates tasks by
// contextId (ListTasks' filter, a continued task's check, a worker's
// memory, which the claim's owner lets it key) does so within one owner.
// The empty owner is relay without client authentication (RELAY_AUTH=none):
// one shared tenant, the anonymous principal.
package tenant

import "context"

type key struct{}

// With returns ctx acting for owner.
func With(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, key{}, owner)
}

// Owner returns the principal ctx acts for ("" without authentication).
func Owner(ctx context.Context) string {
	o, _ := ctx.Value(key{}).(string)
	return o
}

// Sees reports whether ctx may see a task owned by owner.
func Sees(ctx context.Context, owner string) bool { return Owner(ctx) == owner }
