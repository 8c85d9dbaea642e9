package e2b

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"time"

	"connectrpc.com/connect"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/e2b/envd/filesystempb"
	"github.com/paddockhq/paddock/adapters/internal/httpx"
	"github.com/paddockhq/paddock/adapters/internal/reaping"
)

// Leases on E2B (docs/contract.md#leases). A sandbox's metadata is fixed
// at creation, so it records the lease at creation only; renewals go into
// a root-owned file inside the running sandbox, through envd. A paused
// sandbox cannot be read or written: it keeps the lease it had, is never
// an orphan, and is bounded by its maximum age (Config.MaxAge).
const (
	leaseFile  = "/var/lib/paddock/lease.json"
	leaseUser  = "root" // the sandbox's user cannot move its own lease
	leaseWidth = 8      // sandboxes a renewal or a reap reads or writes at once

	stateRunning = "running"
)

// createMetadata is the metadata of a new sandbox called name.
func (a *Adapter) createMetadata(name string, lease paddock.Lease) map[string]string {
	m := map[string]string{metaName: name, metaMarker: "1"}
	if !lease.IsZero() || a.cfg.MaxAge > 0 {
		m[metaCreatedAt] = reaping.FormatTime(time.Now())
	}
	if !lease.IsZero() {
		m[metaOwner] = lease.Owner
		m[metaLeaseUntil] = reaping.FormatTime(lease.Until)
	}
	if a.cfg.MaxAge > 0 {
		m[metaMaxAge] = a.cfg.MaxAge.String()
	}
	return m
}

// claim writes lease into the running sandbox id.
func (a *Adapter) claim(ctx context.Context, id string, lease paddock.Lease) error {
	b, _ := json.Marshal(lease)
	upload := httpx.NewMultipart("file", "lease.json", bytes.NewReader(b))
	defer upload.Done()
	req, err := a.filesRequestAs(ctx, http.MethodPost, id, leaseFile, leaseUser, upload.Body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", upload.ContentType)
	res, err := a.streaming.Do(req)
	if err != nil {
		return httpx.Transport(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return a.rest.StatusError(res.StatusCode, res.Header, body)
	}
	return nil
}

// Outcomes of reading a sandbox's lease file.
type leaseRead int

const (
	leaseFound      leaseRead = iota
	leaseAbsent               // envd answered 404: never renewed
	leaseUnreadable           // anything else: the lease is unknown
)

// leaseIn reads the lease file of the running sandbox id.
func (a *Adapter) leaseIn(ctx context.Context, id string) (paddock.Lease, leaseRead) {
	req, err := a.filesRequestAs(ctx, http.MethodGet, id, leaseFile, leaseUser, nil)
	if err != nil {
		return paddock.Lease{}, leaseUnreadable
	}
	res, err := a.streaming.Do(req)
	if err != nil {
		return paddock.Lease{}, leaseUnreadable
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		return paddock.Lease{}, leaseAbsent
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	var l paddock.Lease
	if err != nil || res.StatusCode != http.StatusOK || json.Unmarshal(body, &l) != nil || l.Owner == "" {
		return paddock.Lease{}, leaseUnreadable
	}
	return l, leaseFound
}

// eachOurs calls fn on every sandbox of ours (metadata paddock=1), page by
// page; past maxListPages it refuses with ErrTruncated.
func (a *Adapter) eachOurs(ctx context.Context, fn func(listed)) error {
	token := ""
	for range maxListPages {
		page, next, err := a.listPage(ctx, url.Values{"metadata": {metaFilter(metaMarker, "1")}, "limit": {"100"}}, token)
		if err != nil {
			return err
		}
		for _, l := range page {
			if l.Metadata[metaName] != "" {
				fn(l)
			}
		}
		if next == "" {
			return nil
		}
		token = next
	}
	return paddock.ErrTruncated
}

// RenewLeases writes lease into each named running sandbox: one walk of the
// listing, then an upload per sandbox, leaseWidth at a time. A paused one
// is skipped (see above).
func (a *Adapter) RenewLeases(ctx context.Context, names []string, lease paddock.Lease) error {
	return reaping.Renew(ctx, a.eachOurs, func(l listed) string {
		if l.State != stateRunning {
			return ""
		}
		return l.Metadata[metaName]
	}, names, leaseWidth, func(ctx context.Context, l listed) error { return a.claim(ctx, l.SandboxID, lease) })
}

// SandboxFacts reads what a reap judges our sandboxes by: the listing,
// and the lease file of each running one. A paused sandbox is judged by
// the owner it was created for; E2B parks an idle sandbox itself (its TTL,
// with auto-pause), so a reap stops none.
func (a *Adapter) SandboxFacts(ctx context.Context) ([]paddock.SandboxFacts, error) {
	var all []listed
	if err := a.eachOurs(ctx, func(l listed) { all = append(all, l) }); err != nil {
		return nil, err
	}
	facts := make([]paddock.SandboxFacts, len(all)) // each call below writes its own element
	err := reaping.Each(ctx, len(all), leaseWidth, func(ctx context.Context, i int) error {
		l := all[i]
		f := paddock.SandboxFacts{Name: l.Metadata[metaName], Created: reaping.ParseTime(l.Metadata[metaCreatedAt]), MaxAge: reaping.ParseDuration(l.Metadata[metaMaxAge])}
		if f.Created.IsZero() {
			f.Created = reaping.ParseTime(l.StartedAt)
		}
		if l.State == stateRunning {
			switch renewed, read := a.leaseIn(ctx, l.SandboxID); read {
			case leaseFound:
				f.Lease = renewed
			case leaseAbsent: // never renewed: the lease it was created with
				f.Lease = paddock.Lease{Owner: l.Metadata[metaOwner], Until: reaping.ParseTime(l.Metadata[metaLeaseUntil])}
			case leaseUnreadable: // unknown this time: never an orphan on a guess
				f.Lease = paddock.Lease{Owner: l.Metadata[metaOwner]}
			}
			if f.Lease.Owner == "" {
				f.Lease = paddock.Lease{}
			}
		} else {
			f.Lease = paddock.Lease{Owner: l.Metadata[metaOwner]} // no end: a paused sandbox is never an orphan
		}
		facts[i] = f
		return nil
	})
	return facts, err
}

// Reclaim destroys a sandbox a reap judged (docs/contract.md#leases).
func (a *Adapter) Reclaim(ctx context.Context, f paddock.SandboxFacts) error {
	return a.Destroy(ctx, a.BuildHandle(f.Name))
}

// forgetLease removes the lease file of the running sandbox id (absent is
// success), so it holds the lease it was created with.
func (a *Adapter) forgetLease(ctx context.Context, id string) error {
	_, err := a.files(id, leaseUser).Remove(ctx, connect.NewRequest(&filesystempb.RemoveRequest{Path: leaseFile}))
	if connect.CodeOf(err) == connect.CodeNotFound {
		return nil
	}
	return fileError(err)
}
