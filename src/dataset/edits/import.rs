//! Edit sessions from version control: commits of a git repository and unified-diff
//! patches (`debian/patches`), typed in a plausible human order.
