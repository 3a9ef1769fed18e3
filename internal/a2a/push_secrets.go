package a2a

import "github.com/a2arelay/relay/internal/secrets"

// pushPlace is the additional data a push config secret is sealed for: the
// task, the config and the field, so a ciphertext moved to another config
// does not open.
func pushPlace(c PushConfig, field string) string {
	return "push\x00" + c.TaskID + "\x00" + c.ID + "\x00" + field
}

// SealPush returns c with its token and credentials sealed (r nil: as they
// are). c's TaskID and ID must be final: they are bound into the ciphertext.
func SealPush(r *secrets.Ring, c PushConfig) (PushConfig, error) {
	var err error
	if c.Token != "" {
		if c.Token, err = r.Seal([]byte(c.Token), pushPlace(c, "token")); err != nil {
			return c, err
		}
	}
	if c.Auth != nil && c.Auth.Credentials != "" {
		auth := *c.Auth
		if auth.Credentials, err = r.Seal([]byte(auth.Credentials), pushPlace(c, "credentials")); err != nil {
			return c, err
		}
		c.Auth = &auth
	}
	if o := c.Options; o != nil && o.Signing != nil && o.Signing.Secret != "" {
		opts, sig := *o, *o.Signing
		if sig.Secret, err = r.Seal([]byte(sig.Secret), pushPlace(c, "signing_secret")); err != nil {
			return c, err
		}
		opts.Signing = &sig
		c.Options = &opts
	}
	return c, nil
}

// OpenPush returns c with its token and credentials in plain text; stale
// reports that it should be sealed again with the current key and stored.
func OpenPush(r *secrets.Ring, c PushConfig) (PushConfig, bool, error) {
	stale := false
	if c.Token != "" {
		b, st, err := r.Open(c.Token, pushPlace(c, "token"))
		if err != nil {
			return c, false, err
		}
		c.Token, stale = string(b), st
	}
	if c.Auth != nil && c.Auth.Credentials != "" {
		b, st, err := r.Open(c.Auth.Credentials, pushPlace(c, "credentials"))
		if err != nil {
			return c, false, err
		}
		auth := *c.Auth
		auth.Credentials = string(b)
		c.Auth, stale = &auth, stale || st
	}
	if o := c.Options; o != nil && o.Signing != nil && o.Signing.Secret != "" {
		b, st, err := r.Open(o.Signing.Secret, pushPlace(c, "signing_secret"))
		if err != nil {
			return c, false, err
		}
		opts, sig := *o, *o.Signing
		sig.Secret = string(b)
		opts.Signing = &sig
		c.Options, stale = &opts, stale || st
	}
	return c, stale, nil
}
