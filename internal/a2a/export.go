package a2a

// EncodeTask returns t in dialect d's wire shape, ready for encoding/json.
func EncodeTask(d Dialect, t Task) any { return codecFor(d).encodeTask(t) }

// EncodeMessage returns m in dialect d's wire shape (v0.1 and v0.3 share it).
func EncodeMessage(d Dialect, m Message) any {
	if d == V10 {
		return v10Msg(&m)
	}
	return v03Msg(&m)
}
