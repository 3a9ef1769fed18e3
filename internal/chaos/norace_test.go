//go:build !race

package chaos

// raceEnabled: the test binary runs without the race detector, and so does
// the relay binary unless RELAY_CHAOS_RACE says otherwise.
const raceEnabled = false
