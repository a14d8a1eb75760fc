"""DNS hosting providers: detection from NS records and publishing through their APIs."""
