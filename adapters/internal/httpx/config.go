package httpx

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/paddockhq/paddock"
)

// CheckConfig refuses a hosted adapter's configuration whose base URL is
// not an absolute http(s) URL or which holds a negative duration, naming
// the setting, as an *paddock.InvalidError.
func CheckConfig(p paddock.Provider, baseURL string, durations map[string]time.Duration, exec paddock.ExecLimits) error {
	if u, err := url.Parse(baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &paddock.InvalidError{Detail: string(p) + " config: the base URL " + strconv.Quote(baseURL) + " is not an absolute http(s) URL"}
	}
	names := make([]string, 0, len(durations))
	for name := range durations {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if durations[name] < 0 {
			return &paddock.InvalidError{Detail: string(p) + " config: " + name + " is negative"}
		}
	}
	return exec.Validate()
}

// Clients are a hosted adapter's HTTP clients over one transport: ordinary
// calls, each bounded by the timeout, and streamed bodies, bounded by their
// context alone. Neither follows a redirect.
type Clients struct {
	Transport http.RoundTripper
	Ordinary  *http.Client
	Streaming *http.Client
}

// NewClients builds the clients over transport (nil = a clone of the
// default transport).
func NewClients(transport http.RoundTripper, timeout time.Duration) Clients {
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	return Clients{
		Transport: transport,
		Ordinary:  &http.Client{Transport: transport, Timeout: timeout, CheckRedirect: NoRedirects},
		Streaming: &http.Client{Transport: transport, CheckRedirect: NoRedirects},
	}
}
