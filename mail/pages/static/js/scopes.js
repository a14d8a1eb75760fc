// Scopes in words, for the consent and pairing screens.
const WORDS = {
  openid: "Know who you are (your account number)",
  profile: "See your name",
  email: "See your email address",
};

export function showScopes(list, scopes) {
  list.replaceChildren(
    ...scopes.map((scope) => {
      const item = document.createElement("li");
      item.textContent = WORDS[scope] || `Use the “${scope}” permission`;
      return item;
    }),
  );
}
