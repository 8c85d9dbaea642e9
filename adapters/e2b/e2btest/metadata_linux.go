package e2btest

import (
	"bytes"
	"errors"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// writeMetadata replaces the metadata of the file at host (a path of this
// machine) with metadata: the pairs it lacks are removed.
func writeMetadata(host string, metadata map[string]string) error {
	names, err := listXattrs(host)
	if err != nil {
		return err
	}
	for _, name := range names {
		key, ours := strings.CutPrefix(name, metadataPrefix)
		if _, keep := metadata[key]; ours && !keep {
			if err := unix.Removexattr(host, name); err != nil && !errors.Is(err, unix.ENODATA) {
				return err
			}
		}
	}
	for k, v := range metadata {
		if err := unix.Setxattr(host, metadataPrefix+k, []byte(v), 0); err != nil {
			return err
		}
	}
	return nil
}

// readMetadata is the metadata of the file at host (following a link, as
// envd reads it); nil when there is none or the filesystem keeps none.
// A pair that is not UTF-8 (set inside the sandbox by other means) is
// left out, as envd leaves it out.
func readMetadata(host string) map[string]string {
	names, err := listXattrs(host)
	if err != nil {
		return nil
	}
	var metadata map[string]string
	for _, name := range names {
		key, ours := strings.CutPrefix(name, metadataPrefix)
		if !ours {
			continue
		}
		value, err := getXattr(host, name)
		if err != nil || !utf8.ValidString(key) || !utf8.Valid(value) {
			continue
		}
		if metadata == nil {
			metadata = map[string]string{}
		}
		metadata[key] = string(value)
	}
	return metadata
}

// listXattrs is the names of the extended attributes of the file at host.
func listXattrs(host string) ([]string, error) {
	for size := 1024; ; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Listxattr(host, buf)
		if errors.Is(err, unix.ERANGE) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var names []string
		for _, name := range bytes.Split(buf[:n], []byte{0}) {
			if len(name) > 0 {
				names = append(names, string(name))
			}
		}
		return names, nil
	}
}

// getXattr is the value of the extended attribute name of the file at
// host.
func getXattr(host, name string) ([]byte, error) {
	for size := 4096; ; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Getxattr(host, name, buf)
		if errors.Is(err, unix.ERANGE) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
}
