package delivery

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// mustValidator is NewValidator for deps and a config the test knows are
// valid.
func mustValidator(d ValidatorDeps, cfg ValidatorConfig) *Validator {
	v, err := NewValidator(d, cfg)
	if err != nil {
		panic(err)
	}
	return v
}

// mustOperator is NewOperator for a config the test knows is valid.
func mustOperator(d OperatorDeps, cfg OperatorConfig) *Operator {
	o, err := NewOperator(d, cfg)
	if err != nil {
		panic(err)
	}
	return o
}

type noValidations struct{}

func (noValidations) HostValidated(context.Context, string) (bool, error) { return false, nil }
func (noValidations) MarkHostValidated(context.Context, string, time.Duration) error {
	return nil
}

// A Validator and an Operator are built whole or not at all: a missing
// dependency, a bound that is not positive or an operator URL that is not
// an absolute http(s) URL is an error naming it.
func TestValidatorAndOperatorConfigsAreChecked(t *testing.T) {
	t.Parallel()
	ok := ValidatorDeps{Store: noValidations{}, Transport: http.DefaultTransport}
	for _, tc := range []struct {
		name string
		d    ValidatorDeps
		cfg  ValidatorConfig
		want string
	}{
		{"no store", ValidatorDeps{Transport: http.DefaultTransport}, ValidatorConfig{Timeout: time.Second, TTL: time.Hour}, "Store and Transport are required"},
		{"no transport", ValidatorDeps{Store: noValidations{}}, ValidatorConfig{Timeout: time.Second, TTL: time.Hour}, "Store and Transport are required"},
		{"no timeout", ok, ValidatorConfig{TTL: time.Hour}, "Timeout"},
		{"negative ttl", ok, ValidatorConfig{Timeout: time.Second, TTL: -time.Hour}, "TTL"},
	} {
		if _, err := NewValidator(tc.d, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("validator, %s: got error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	if v := mustValidator(ok, ValidatorConfig{Timeout: time.Second, TTL: time.Hour}); v.ttl != time.Hour || v.client.Timeout != time.Second {
		t.Errorf("validator ttl %s, timeout %s: want the config's", v.ttl, v.client.Timeout)
	}
	for _, u := range []string{"", "hooks.example/alerts", "ftp://hooks.example/alerts", "https:///alerts"} {
		if _, err := NewOperator(OperatorDeps{}, OperatorConfig{URL: u}); err == nil || !strings.Contains(err.Error(), "URL") {
			t.Errorf("operator URL %q: got error %v, want one naming URL", u, err)
		}
	}
	if o := mustOperator(OperatorDeps{}, OperatorConfig{URL: "https://hooks.example/alerts", Token: "t"}); o.log == nil || o.token != "t" {
		t.Errorf("operator: want a logger and the token given")
	}
}
