package selfsigned

import (
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

// The certificate verifies, against its own PEM, for every name it was made for and for
// no other, and stays valid for a year.
func TestCertificateNames(t *testing.T) {
	_, caPEM, err := New("test", "10.1.2.3", "manager.example", "")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("the PEM holds no certificate")
	}
	cert, err := parse(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	inAYear := time.Now().Add(Validity - time.Minute)
	for name, valid := range map[string]bool{
		"127.0.0.1":       true,
		"::1":             true,
		"localhost":       true,
		"10.1.2.3":        true,
		"manager.example": true,
		"10.1.2.4":        false,
		"other.example":   false,
	} {
		for _, at := range []time.Time{time.Now(), inAYear} {
			_, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: at,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			if (err == nil) != valid {
				t.Errorf("%s at %s: verify error %v, want valid: %v", name, at.Format(time.DateOnly), err, valid)
			}
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: pool, CurrentTime: time.Now().Add(Validity + time.Hour)}); err == nil {
		t.Error("the certificate is still valid after Validity")
	}
}

func parse(certPEM []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(certPEM)
	return x509.ParseCertificate(block.Bytes)
}
