package conformance

import "strings"

// article returns "a" or "an" for word, by the sound it starts with (a
// Postgres object, an Info object): "an" before a vowel letter, except
// where that vowel sounds like a consonant (a unit, a user, a one-off, a
// EuroDNS); "a" before a consonant letter, except a silent h (an hour)
// and initialisms spelled out letter by letter whose first letter's name
// starts with a vowel (an HTTPCache, an SSHKey). Other initialisms are read
// as words, as kinds usually are (a NATS, a VMDisk).
func article(word string) string {
	lower := strings.ToLower(word)
	for _, p := range []string{"eu", "ewe", "one", "once", "unic", "unif", "union", "uniq", "unit", "univ", "usa", "use", "usu", "uti", "ura", "ure", "uro"} {
		if strings.HasPrefix(lower, p) {
			return "a"
		}
	}
	for _, p := range []string{"heir", "honest", "honor", "honour", "hour"} {
		if strings.HasPrefix(lower, p) {
			return "an"
		}
	}
	for _, p := range []string{"FTP", "HTML", "HTTP", "LDAP", "MQTT", "NFS", "RDS", "S3", "SMTP", "SSH", "SSL", "XML"} {
		if strings.HasPrefix(word, p) {
			return "an"
		}
	}
	if lower != "" && strings.ContainsRune("aeiou", rune(lower[0])) {
		return "an"
	}
	return "a"
}
