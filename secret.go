package paddock

import (
	"fmt"
	"log/slog"
)

// redacted is what every printed form of a Secret shows.
const redacted = "[redacted]"

// Secret holds a credential (an API key, a preview token). Every printed form
// (fmt verbs, JSON, text marshalling, slog) shows "[redacted]"; Reveal is the
// one way to read it, at the point where it goes into a request header.
type Secret struct {
	value string
}

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{value: s} }

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return s.value }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.value == "" }

// String returns "[redacted]".
func (s Secret) String() string { return redacted }

// GoString returns "paddock.Secret([redacted])".
func (s Secret) GoString() string { return "paddock.Secret(" + redacted + ")" }

// Format prints "[redacted]" for every verb.
func (s Secret) Format(f fmt.State, verb rune) { formatSafe(f, verb, redacted, s.GoString()) }

// MarshalText returns "[redacted]", so JSON and other encoders never see the
// value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue returns "[redacted]".
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// UnmarshalText stores text as the secret, so a configuration file can carry
// one. (Marshalling never writes the value back.)
func (s *Secret) UnmarshalText(text []byte) error {
	s.value = string(text)
	return nil
}

// formatSafe writes s for %v, %+v and %s, gos for %#v and a quoted s for %q.
func formatSafe(f fmt.State, verb rune, s, gos string) {
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, gos)
	case verb == 'q':
		fmt.Fprintf(f, "%q", s)
	default:
		fmt.Fprint(f, s)
	}
}
