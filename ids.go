package paddock

// Identifier patterns the contract fixes. Adapters mint session ids that match
// SessionIDPattern so they can be terminated; hosts mint operation ids that
// match OperationIDPattern.
const (
	SessionIDPattern   = `^[A-Za-z0-9_-]{1,256}$`
	OperationIDPattern = `^[A-Za-z0-9_-]{1,128}$`

	maxSessionIDLen   = 256
	maxOperationIDLen = 128
)

// ValidSessionID reports whether id matches SessionIDPattern: 1 to 256 bytes
// of ASCII letters, digits, '_' and '-'. Such an id cannot escape a path.
func ValidSessionID(id string) bool { return isToken(id, maxSessionIDLen) }

// ValidOperationID reports whether id matches OperationIDPattern.
func ValidOperationID(id string) bool { return isToken(id, maxOperationIDLen) }

// ValidSandboxName reports whether name can key a sandbox: 1 to 256 bytes,
// no NUL, no '/', and not "." or "..".
func ValidSandboxName(name string) bool {
	if name == "" || len(name) > 256 || name == "." || name == ".." {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] == 0 || name[i] == '/' {
			return false
		}
	}
	return true
}

// isToken reports whether s is 1..max bytes of [A-Za-z0-9_-].
func isToken(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
