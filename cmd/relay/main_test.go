package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/a2arelay/relay/internal/redistest"
)

func TestMain(m *testing.M) { redistest.CheckLeaksMain(m) }

// TestRun covers the paths of run that stop before the server starts.
func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stdout string // substring of stdout
		stderr string // substring of stderr
	}{
		{"help", []string{"--help"}, nil, 0, "RELAY_REDIS_URL", ""},
		{"serve help", []string{"serve", "-h"}, nil, 0, "relay version", ""},
		{"bad env", nil, map[string]string{"RELAY_RETRY_INITIAL": "abc"}, 2, "", `relay: RELAY_RETRY_INITIAL: invalid duration "abc"`},
		{"bad flag", []string{"serve", "--partitions", "0"}, nil, 2, "", "relay: --partitions: must be between 1 and 1024"},
		{"unknown flag", []string{"--nope"}, nil, 2, "", "relay: flag provided but not defined: -nope"},
		{"extra argument", []string{"serve", "now"}, nil, 2, "", `relay: unexpected argument "now"`},
		{"unknown command", []string{"launch"}, nil, 2, "", `relay: unknown command "launch"`},
		{"version", []string{"version"}, nil, 0, "relay dev\n", ""},
		{"bench timeline too fine", []string{"bench", "--timeline", "1us"}, nil, 2, "", "relay bench: --timeline: a timeline window must be 0 or at least 1ms, not 1µs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			env := func(k string) string { return tt.env[k] }
			code := run(tt.args, env, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout %q lacks %q", stdout.String(), tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.stderr)
			}
		})
	}
}
