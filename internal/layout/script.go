package layout

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// libLua holds the Lua functions several scripts share: stream ids, the
// event a lane entry refers to, the oldest event an outbox still needs, and
// the Lua side of the delivery record codec (record.go).
//
//go:embed lua/lib.lua
var libLua string

// Script returns a script whose body starts with the shared functions, so
// that each script is still one self-contained body for Redis.
func Script(body string) *redis.Script { return redis.NewScript(libLua + body) }
