package e2btest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
)

// A file's user-defined metadata, as envd keeps it: each pair an extended
// attribute of the file, named user.e2b.<key>. An upload sets it from its
// X-Metadata-<key> headers (keys lowercased), replacing what the file had;
// its answer, Stat and ListDir read it back from the file. Where the
// filesystem keeps no extended attributes, a write keeps none and says
// nothing, as envd does.

// metadataPrefix names the extended attributes that hold the metadata.
const metadataPrefix = "user.e2b."

// Limits envd checks before it writes: the longest key (the kernel's
// attribute name limit less the prefix), and the total of every name and
// value (what one filesystem block holds).
const (
	maxMetadataKey   = 255 - len(metadataPrefix)
	maxMetadataTotal = 4096
)

// metadataHeaders is the upload's metadata: each X-Metadata-<key> header's
// first value by its key lowercased; nil when there is none.
func metadataHeaders(h http.Header) map[string]string {
	var metadata map[string]string
	for name, values := range h {
		key, found := strings.CutPrefix(name, "X-Metadata-")
		if !found || key == "" || len(values) == 0 {
			continue
		}
		if metadata == nil {
			metadata = map[string]string{}
		}
		metadata[strings.ToLower(key)] = values[0]
	}
	return metadata
}

// validateMetadata refuses what envd refuses: an empty or overlong key,
// a byte outside printable ASCII, more than the total.
func validateMetadata(metadata map[string]string) error {
	total := 0
	for k, v := range metadata {
		switch {
		case k == "":
			return errors.New("metadata key must not be empty")
		case len(k) > maxMetadataKey:
			return fmt.Errorf("metadata key %q exceeds %d bytes", k, maxMetadataKey)
		}
		if err := printableASCII("key", k); err != nil {
			return err
		}
		if err := printableASCII(fmt.Sprintf("value for key %q", k), v); err != nil {
			return err
		}
		total += len(metadataPrefix) + len(k) + len(v)
	}
	if total > maxMetadataTotal {
		return fmt.Errorf("total metadata size %d exceeds %d bytes", total, maxMetadataTotal)
	}
	return nil
}

func printableASCII(label, s string) error {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("metadata %s contains non-printable-ASCII byte 0x%02x at offset %d", label, c, i)
		}
	}
	return nil
}

// noXattrs reports whether err says the filesystem keeps no extended
// attributes.
func noXattrs(err error) bool {
	return errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, errors.ErrUnsupported)
}
