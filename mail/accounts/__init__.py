"""Panel accounts: sign-up, profile, email verification, password reset, referrals."""
