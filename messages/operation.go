package messages

import (
	"strings"
	"unicode"

	"google.golang.org/protobuf/proto"
)

// Operation names the contract operation a request (or its reply) belongs
// to, derived from the message's name: ListDirRequest and ListDirReply
// are "list_dir", PublicURLRequest is "public_url". Every error of the
// protocol names its operation this way, so no list of names is kept.
func Operation(m proto.Message) string {
	name := string(m.ProtoReflect().Descriptor().Name())
	name = strings.TrimSuffix(strings.TrimSuffix(name, "Request"), "Reply")
	return snake(name)
}

// snake turns a CamelCase name into snake_case, keeping a run of capitals
// (an acronym such as URL) as one word.
func snake(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) {
			startsWord := i > 0 && (unicode.IsLower(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1])))
			if startsWord {
				b.WriteByte('_')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	return b.String()
}
