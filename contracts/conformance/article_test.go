package conformance

import "testing"

func TestArticle(t *testing.T) {
	for _, tc := range []struct{ word, want string }{
		// Vowel letters.
		{"Info", "an"}, {"Ingress", "an"}, {"Etcd", "an"}, {"ExternalDNS", "an"}, {"OpenBAO", "an"},
		{"application", "an"}, {"Unmanaged", "an"}, {"uninstall", "an"},
		// Vowel letters sounding like consonants.
		{"Unit", "a"}, {"UserGroup", "a"}, {"Union", "a"}, {"one-off", "a"}, {"EuroDNS", "a"}, {"Uranium", "a"},
		// Consonant letters.
		{"Postgres", "a"}, {"BootBox", "a"}, {"NATS", "a"}, {"VMDisk", "a"}, {"Tenant", "a"}, {"x", "a"}, {"", "a"},
		// A silent h, and initialisms read letter by letter.
		{"Hourly", "an"}, {"honest", "an"}, {"HTTPCache", "an"}, {"SSHKey", "an"}, {"S3Bucket", "an"},
		{"Host", "a"},
	} {
		if got := article(tc.word); got != tc.want {
			t.Errorf("article(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}
