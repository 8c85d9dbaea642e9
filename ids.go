package paddock

import "strings"

// Identifier patterns the contract fixes. Adapters mint session ids that match
// SessionIDPattern so they can be terminated; hosts mint operation ids that
// match OperationIDPattern.
const (
	SessionIDPattern   = `^[A-Za-z0-9_-]{1,256}$`
	OperationIDPattern = `^[A-Za-z0-9_-]{1,128}$`

	maxSessionIDLen   = 256
	maxOperationIDLen = 128
)

// ValidateSessionID answers an *InvalidError with detail session_id unless
// id matches SessionIDPattern: 1 to 256 bytes of ASCII letters, digits, '_'
// and '-'. Such an id cannot escape a path.
func ValidateSessionID(id string) error {
	if !isToken(id, maxSessionIDLen) {
		return &InvalidError{Detail: DetailSessionID}
	}
	return nil
}

// ValidateOperationID answers an *InvalidError with detail
// checkpoint_operation_id unless id matches OperationIDPattern.
func ValidateOperationID(id string) error {
	if !isToken(id, maxOperationIDLen) {
		return &InvalidError{Detail: DetailCheckpointOperationID}
	}
	return nil
}

// ValidateSandboxName answers an *InvalidError with detail sandbox_name
// unless name can key a sandbox: 1 to 256 bytes, no NUL, no '/', and not
// "." or "..".
func ValidateSandboxName(name string) error {
	bad := name == "" || len(name) > 256 || name == "." || name == ".." || strings.ContainsAny(name, "/\x00")
	if bad {
		return &InvalidError{Detail: DetailSandboxName}
	}
	return nil
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
