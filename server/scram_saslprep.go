package server

import "unicode/utf8"

// saslPrep normalizes a password before SCRAM hashes it (RFC 4013), as
// PostgreSQL's pg_saslprep does on both ends: libpq prepares what the user
// typed, the server what CREATE ROLE … PASSWORD and a cleartext login give
// it. A password that is not valid UTF-8 or holds a prohibited character is
// used as it is, again as PostgreSQL does. An ASCII password never changes.
//
// Left out: NFKC normalization (it needs Unicode tables the standard library
// lacks, and server imports nothing else), the check for code points
// unassigned in Unicode 3.2 and the bidirectional rules. The last two only
// make PostgreSQL fall back to the raw password. So a non-ASCII password
// that NFKC changes (decomposed accents, full-width letters, ligatures) does
// not match what libpq sends; one already in NFKC form, as typed text
// almost always is, does.
func saslPrep(password string) string {
	ascii := true
	for i := 0; i < len(password); i++ {
		if password[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii || !utf8.ValidString(password) {
		return password
	}
	mapped := make([]rune, 0, len(password))
	for _, r := range password {
		switch {
		case isNonASCIISpace(r):
			mapped = append(mapped, ' ')
		case isMappedToNothing(r):
		default:
			mapped = append(mapped, r)
		}
	}
	out := string(mapped)
	if out == "" {
		return password
	}
	for _, r := range out {
		if isProhibited(r) {
			return password
		}
	}
	return out
}

// isNonASCIISpace is RFC 3454 table C.1.2.
func isNonASCIISpace(r rune) bool {
	switch {
	case r == 0x00A0, r == 0x1680, r >= 0x2000 && r <= 0x200B, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

// isMappedToNothing is RFC 3454 table B.1.
func isMappedToNothing(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x1806, r >= 0x180B && r <= 0x180D,
		r >= 0x200B && r <= 0x200D, r == 0x2060, r >= 0xFE00 && r <= 0xFE0F, r == 0xFEFF:
		return true
	}
	return false
}

// isProhibited is RFC 4013 section 2.3: tables C.1.2 and C.2.1 to C.9 of
// RFC 3454.
func isProhibited(r rune) bool {
	switch {
	case isNonASCIISpace(r):
		return true
	case r < 0x20, r == 0x7F: // C.2.1
		return true
	case r >= 0x80 && r <= 0x9F, r == 0x06DD, r == 0x070F, r == 0x180E, r == 0x200C, r == 0x200D,
		r == 0x2028, r == 0x2029, r >= 0x2060 && r <= 0x2063, r >= 0x206A && r <= 0x206F,
		r == 0xFEFF, r >= 0xFFF9 && r <= 0xFFFC, r >= 0x1D173 && r <= 0x1D17A: // C.2.2
		return true
	case r >= 0xE000 && r <= 0xF8FF, r >= 0xF0000 && r <= 0xFFFFD, r >= 0x100000 && r <= 0x10FFFD: // C.3
		return true
	case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE: // C.4
		return true
	case r >= 0xD800 && r <= 0xDFFF: // C.5
		return true
	case r == 0xFFFD, r >= 0x2FF0 && r <= 0x2FFB: // C.6, C.7 (FFF9–FFFC above)
		return true
	case r == 0x0340, r == 0x0341, r == 0x200E, r == 0x200F, r >= 0x202A && r <= 0x202E: // C.8
		return true
	case r == 0xE0001, r >= 0xE0020 && r <= 0xE007F: // C.9
		return true
	}
	return false
}
