// Package cpstore keeps the checkpoints of an adapter that takes them
// itself: one directory per checkpoint, holding its record and its data
// (whatever the adapter puts there: a copy of a sandbox's files, an
// archive), under paddock.CheckpointLimits. A checkpoint appears whole or
// not at all: it is filled under a temporary name and renamed.
package cpstore

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/treecopy"
	"github.com/rs/zerolog"
)

// Record is what the store keeps of a checkpoint beside its data.
type Record struct {
	paddock.Checkpoint
	Sandbox string `json:"sandbox"`
	// GoneSince is when its sandbox was found gone (zero: it was not);
	// the retention runs from then.
	GoneSince time.Time `json:"gone_since,omitzero"`
	// Extra is the adapter's own: what it needs to restore or fork.
	Extra json.RawMessage `json:"extra,omitempty"`
}

const (
	recordFile = "record.json"
	dataDir    = "data"
	tmpPrefix  = ".tmp-"
)

// Store is the checkpoints under one directory. Its methods are safe for
// concurrent use within one process.
type Store struct {
	dir    string
	limits paddock.CheckpointLimits
	log    zerolog.Logger
	now    func() time.Time

	mu       sync.Mutex
	reserved struct {
		count int
		bytes int64
	}
}

// New returns the store under dir (made when first needed) with limits
// (their defaults applied), logging its reaping to log.
func New(dir string, limits paddock.CheckpointLimits, log zerolog.Logger) (*Store, error) {
	limits, err := limits.WithDefaults()
	if err != nil {
		return nil, err
	}
	return &Store{dir: dir, limits: limits, log: log, now: time.Now}, nil
}

// NewID is a fresh checkpoint id.
func NewID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "cp-" + hex.EncodeToString(b)
}

// validID reports whether id can name a checkpoint here (what NewID
// makes), so no id reaches outside the store's directory.
func validID(id string) bool {
	if !strings.HasPrefix(id, "cp-") || len(id) != 27 {
		return false
	}
	_, err := hex.DecodeString(id[3:])
	return err == nil
}

// Create makes a checkpoint of sandbox expected to hold size bytes:
// within the limits (else invalid(checkpoint_limit)), fill writes its
// data into the directory it is given and says how many bytes it wrote:
// the checkpoint's size, checked against the limits again. The checkpoint
// appears once fill succeeded within them. A failure that is not of the
// taxonomy (the disk's, the fill's) is unavailable.
func (s *Store) Create(rec Record, size int64, fill func(data string) (int64, error)) (Record, error) {
	rec, err := s.create(rec, size, fill)
	return rec, typed("taking a checkpoint", err)
}

func (s *Store) create(rec Record, size int64, fill func(data string) (int64, error)) (Record, error) {
	release, err := s.reserve(1, size)
	if err != nil {
		return Record{}, err
	}
	defer release()
	rec.ID = NewID()
	rec.CreatedAt = s.now().UTC()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return Record{}, err
	}
	tmp := filepath.Join(s.dir, tmpPrefix+rec.ID)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return Record{}, err
	}
	done := false
	defer func() {
		if !done {
			_ = treecopy.RemoveAll(tmp)
		}
	}()
	held, err := fill(filepath.Join(tmp, dataDir))
	if err != nil {
		return Record{}, err
	}
	rec.Size = held
	if held > size {
		grow, err := s.reserve(0, held-size) // what it wrote beyond its estimate
		if err != nil {
			return Record{}, err
		}
		defer grow()
	}
	if err := writeRecord(tmp, rec); err != nil {
		return Record{}, err
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, rec.ID)); err != nil {
		return Record{}, err
	}
	done = true
	return rec, nil
}

// reserve counts n checkpoints of size bytes against the limits until
// release, or refuses them.
func (s *Store) reserve(n int, size int64) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.all()
	if err != nil {
		return nil, err
	}
	count, bytes := len(all)+s.reserved.count, s.reserved.bytes+size
	for _, r := range all {
		bytes += r.Size
	}
	if count+n > s.limits.MaxCount {
		return nil, &paddock.InvalidError{Detail: fmt.Sprintf("%s: %d checkpoints kept, the most this adapter keeps", paddock.DetailCheckpointLimit, count)}
	}
	if bytes > s.limits.MaxBytes {
		return nil, &paddock.InvalidError{Detail: fmt.Sprintf("%s: %d bytes with this one, over the %d this adapter keeps", paddock.DetailCheckpointLimit, bytes, s.limits.MaxBytes)}
	}
	s.reserved.count += n
	s.reserved.bytes += size
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.reserved.count -= n
		s.reserved.bytes -= size
	}, nil
}

// Get returns the record of sandbox's checkpoint id and the directory of
// its data; not_found when there is none, or it is another sandbox's.
func (s *Store) Get(sandbox, id string) (Record, string, error) {
	rec, dir, err := s.get(id)
	if err == nil && rec.Sandbox != sandbox {
		err = paddock.ErrNotFound
	}
	if err != nil {
		return Record{}, "", typed("reading a checkpoint", err)
	}
	return rec, filepath.Join(dir, dataDir), nil
}

// get reads checkpoint id's record, and answers its directory.
func (s *Store) get(id string) (Record, string, error) {
	if !validID(id) {
		return Record{}, "", paddock.ErrNotFound
	}
	dir := filepath.Join(s.dir, id)
	rec, err := readRecord(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, "", paddock.ErrNotFound
	}
	return rec, dir, err
}

// List returns sandbox's checkpoints, oldest first.
func (s *Store) List(sandbox string) ([]paddock.Checkpoint, error) {
	all, err := s.all()
	if err != nil {
		return nil, typed("listing checkpoints", err)
	}
	out := []paddock.Checkpoint{}
	for _, r := range all {
		if r.Sandbox == sandbox {
			out = append(out, r.Checkpoint)
		}
	}
	return out, nil
}

// all reads every checkpoint's record, oldest first.
func (s *Store) all() ([]Record, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, e := range entries {
		if !e.IsDir() || !validID(e.Name()) {
			continue
		}
		rec, err := readRecord(filepath.Join(s.dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // being deleted
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Delete removes sandbox's checkpoint id; one that is absent, or another
// sandbox's, is success.
func (s *Store) Delete(sandbox, id string) error {
	_, _, err := s.Get(sandbox, id)
	switch {
	case errors.Is(err, paddock.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	return typed("deleting a checkpoint", s.remove(id))
}

// remove removes checkpoint id; an absent one is success.
func (s *Store) remove(id string) error {
	dir := filepath.Join(s.dir, id)
	trash := filepath.Join(s.dir, tmpPrefix+"deleted-"+id)
	if err := os.Rename(dir, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return treecopy.RemoveAll(trash)
}

// Reap notes the checkpoints whose sandbox alive says is gone, and
// removes those gone for longer than the retention; it returns how many
// it removed, and logs that and any failure.
func (s *Store) Reap(alive func(sandbox string) bool) (int, error) {
	n, err := s.reap(alive)
	if err != nil {
		s.log.Warn().Err(err).Msg("reaping checkpoints")
	}
	if n > 0 {
		s.log.Debug().Int("removed", n).Msg("checkpoints past their retention")
	}
	return n, err
}

func (s *Store) reap(alive func(sandbox string) bool) (int, error) {
	all, err := s.all()
	if err != nil {
		return 0, err
	}
	now := s.now().UTC()
	removed := 0
	for _, r := range all {
		if alive(r.Sandbox) {
			if !r.GoneSince.IsZero() { // a sandbox of that name again: its checkpoints are kept
				r.GoneSince = time.Time{}
				if err := writeRecord(filepath.Join(s.dir, r.ID), r); err != nil {
					return removed, err
				}
			}
			continue
		}
		if r.GoneSince.IsZero() {
			r.GoneSince = now
			if err := writeRecord(filepath.Join(s.dir, r.ID), r); err != nil {
				return removed, err
			}
		}
		if s.limits.Retention >= 0 && now.Sub(r.GoneSince) >= s.limits.Retention {
			if err := s.remove(r.ID); err != nil {
				return removed, err
			}
			removed++
		}
	}
	return removed, nil
}

// typed is err as the taxonomy has it: itself when it is of the taxonomy,
// else unavailable, saying what was being done.
func typed(doing string, err error) error {
	var kinded interface{ Kind() paddock.Kind }
	if err == nil || errors.As(err, &kinded) {
		return err
	}
	return &paddock.UnavailableError{Detail: doing + ": " + err.Error()}
}

func writeRecord(dir string, rec Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, recordFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, recordFile))
}

func readRecord(dir string) (Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, recordFile))
	if err != nil {
		return Record{}, err
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return Record{}, fmt.Errorf("checkpoint record %s: %w", filepath.Base(dir), err)
	}
	return rec, nil
}
