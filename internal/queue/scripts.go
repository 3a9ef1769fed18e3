package queue

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// libLua holds the Lua functions several scripts share (stream ids, the
// event a lane entry refers to).
//
//go:embed lua/lib.lua
var libLua string

// withLib returns the script body with the shared functions before it.
func withLib(body string) *redis.Script { return redis.NewScript(libLua + body) }
