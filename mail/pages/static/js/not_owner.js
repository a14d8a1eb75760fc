// The page that tells a non-owner a section is the instance owner's has nothing to drive.
