// Package tenant carries the principal a request acts for through a
// context: every task belongs to the principal that created it, and only
// that principal sees it. The empty owner is relay without client
// authentication (RELAY_AUTH=none): one shared tenant.
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
