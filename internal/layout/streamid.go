package layout

import (
	"strconv"
	"strings"
)

// IDBefore orders Redis stream ids ("ms-seq"): a comes before b (lib.lua's
// before, in Go).
func IDBefore(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	ai, _ := strconv.ParseUint(am, 10, 64)
	bi, _ := strconv.ParseUint(bm, 10, 64)
	if ai != bi {
		return ai < bi
	}
	aj, _ := strconv.ParseUint(as, 10, 64)
	bj, _ := strconv.ParseUint(bs, 10, 64)
	return aj < bj
}
