//go:build race

package chaos

// raceEnabled: the test binary runs with the race detector, so by default
// the relay binary is built with it too (its packages are in the build
// cache already, and relay's own races surface under chaos).
const raceEnabled = true
