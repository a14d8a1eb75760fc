// Scopes in words, for the consent and pairing screens.
const WORDS = {
  openid: "Know who you are (your account number)",
  profile: "See your name",
  email: "See your email address",
  // JMAP (docs/mail.md): every mailbox of your account, to read, organise and send.
  mail: "Read, organise and send the mail of all your mailboxes",
  "urn:ietf:params:jmap:mail": "Read, organise and send the mail of all your mailboxes",
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
